import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { RecipientsRepo } from "../../../src/outreach/campaigns/RecipientsRepo.ts"
import { failsWith } from "../../support/Assertions.ts"
import { backends, client, seedTenant, testServer } from "../../support/TestServer.ts"

const html = "<p>Hi {{firstName | there}} of {{plan}}</p><p><a href=\"{{unsubscribeUrl}}\">Unsubscribe</a></p>"
const vip = { all: [{ field: "tags", op: "eq", value: "vip" }] }

/** A company with three leads (two tagged vip, one of those suppressed) and a vip smart list. */
const setUp = Effect.gen(function*() {
  const tenant = yield* seedTenant()
  const api = yield* client({ apiKey: tenant.apiKey })
  yield* api.leads.create({ payload: { email: "ada@example.com", firstName: "Ada", tags: ["vip"], fields: { plan: "pro", seats: 3 } } })
  yield* api.leads.create({ payload: { email: "bob@example.com", firstName: "Bob" } })
  yield* api.leads.create({ payload: { email: "cy@example.com", tags: ["vip"] } })
  yield* api.lists.addSuppression({ payload: { email: "CY@example.com" } })
  const smartList = yield* api.smartLists.create({ payload: { name: "VIPs", filter: vip } })
  const list = yield* api.lists.create({ payload: { name: "Plain", rows: [{ email: "dan@example.com" }] } })
  const campaign = yield* api.campaigns.create({ payload: { name: "Sale", subject: "Sale", bodyDocument: { html } } })
  return { tenant, api, smartList, list, campaign, params: { campaignId: campaign.id } }
})

describe.each(backends)("smart lists as audiences on $name", ({ storage }) => {
  it.layer(testServer(storage))((it) => {
    it.effect("a campaign sends to the leads its smart list matches, suppressed ones skipped, custom fields as merge fields", () =>
      Effect.gen(function*() {
        const { api, smartList, params } = yield* setUp
        const sending = yield* api.campaigns.send({ params, payload: { smartListId: smartList.id } })
        expect(sending).toMatchObject({ status: "sending", smartListId: smartList.id, listId: null })
        const recipients = yield* api.campaigns.listRecipients({ params, query: {} })
        expect(recipients.items.map((r) => [r.email, r.status]).toSorted()).toEqual([
          ["ada@example.com", "pending"],
          ["cy@example.com", "skipped"]
        ])
        const ada = recipients.items.find((r) => r.email === "ada@example.com")!
        const stored = yield* RecipientsRepo.use((repo) => repo.get(ada.id))
        expect(Option.getOrThrow(stored).fields).toEqual({ email: "ada@example.com", firstName: "Ada", plan: "pro" })
      }))

    it.effect("schedule keeps the smart list; listId and smartListId together, an empty or foreign smart list refuse", () =>
      Effect.gen(function*() {
        const { api, smartList, list, params } = yield* setUp
        yield* failsWith(
          api.campaigns.send({ params, payload: { listId: list.id, smartListId: smartList.id } }),
          "BadRequest",
          /listId or smartListId, not both/
        )
        const nobody = yield* api.smartLists.create({ payload: { name: "Nobody", filter: { all: [{ field: "company", op: "eq", value: "x" }] } } })
        yield* failsWith(api.campaigns.send({ params, payload: { smartListId: nobody.id } }), "BadRequest", /matches no lead/)
        const other = yield* client({ apiKey: (yield* seedTenant("other")).apiKey })
        const theirs = yield* other.smartLists.create({ payload: { name: "Theirs", filter: vip } })
        yield* failsWith(api.campaigns.send({ params, payload: { smartListId: theirs.id } }), "NotFound")
        const scheduled = yield* api.campaigns.schedule({
          params,
          payload: { scheduledAt: new Date(Date.now() + 86_400_000), smartListId: smartList.id }
        })
        expect(scheduled).toMatchObject({ status: "scheduled", smartListId: smartList.id, listId: null })
        // A later list replaces the smart list.
        const moved = yield* api.campaigns.schedule({ params, payload: { scheduledAt: new Date(Date.now() + 86_400_000), listId: list.id } })
        expect(moved).toMatchObject({ smartListId: null, listId: list.id })
      }))

    it.effect("a sequence enrolls the leads its smart list matches", () =>
      Effect.gen(function*() {
        const { api, smartList, list } = yield* setUp
        const sequence = yield* api.sequences.create({
          payload: { name: "Intro", steps: [{ type: "email", subject: "Hi", body: "<p>Hello</p>", delayDays: 0 }] }
        })
        const params = { sequenceId: sequence.id }
        expect(yield* api.sequences.enroll({ params, payload: { smartListId: smartList.id } })).toEqual({
          enrolled: 1,
          suppressed: 1,
          alreadyEnrolled: 0
        })
        const executions = yield* api.sequences.executions({ params, query: {} })
        expect(executions.items.map((e) => e.email)).toEqual(["ada@example.com"])
        yield* failsWith(
          api.sequences.enroll({ params, payload: { smartListId: smartList.id, listId: list.id } }),
          "BadRequest",
          /exactly one of listId, smartListId and rowIds/
        )
        yield* failsWith(api.sequences.enroll({ params, payload: { smartListId: "sml_nope" } }), "NotFound")
      }))
  })
})
