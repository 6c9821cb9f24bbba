import { Effect, Option, Result, Schema } from "effect"
import { render } from "../messages/MergeFields.ts"
import { decodeModelJson } from "../../work/content/ContentModel.ts"
import { seededRandom } from "../../work/content/Spintax.ts"
import { type LlmRequest, type LlmResponse, ModelCatalog } from "../../models/llm/Llm.ts"
import * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import type { DraftOutcome, ExecutionRecord, SequenceStep } from "./SequenceRecords.ts"

/**
 * Drafting one execution: the step's subject and body (instructions, or a
 * template with merge fields and spintax) and the contact's fields go to the
 * model, which answers with the `write_email` tool. The request is billed
 * under feature `sequences` (hold the worst case, settle to the real tokens).
 * The template rendered for the contact is offered as the tool's default
 * values, so the offline `local` model — which fills a tool's arguments with
 * their defaults — drafts exactly that.
 */

/** The tier drafting asks for. */
export const draftingModelTier = "balanced"

/** The longest draft the model may write (output tokens). */
const maxDraftTokens = 2_000

const DraftAnswer = Schema.Struct({ subject: Schema.NonEmptyString, body: Schema.NonEmptyString })

const system = "You write one outreach e-mail for one contact. Follow the step's instructions, or, when the step is a " +
  "ready template, polish it lightly without changing its meaning. Address the contact by the fields given; never " +
  "invent facts about them. The body is simple HTML (paragraphs, links). Answer with the write_email tool."

/** Fields only the send knows (the recipient's own links): a draft keeps them as merge fields. */
const sendTimeFields = { unsubscribeUrl: "{{unsubscribeUrl}}" }

/** The step's template rendered for the contact: what the `local` model answers. */
const renderedStep = (step: SequenceStep, execution: ExecutionRecord) => {
  const values = { ...execution.fields, ...sendTimeFields }
  return Result.all({
    subject: render(step.subject, values, { html: false, random: seededRandom(`${execution.id}:subject`) }),
    body: render(step.body, values, { html: true, random: seededRandom(execution.id) })
  })
}

export const draftRequest = (model: string, step: SequenceStep, execution: ExecutionRecord, rendered: { readonly subject: string; readonly body: string }): LlmRequest => ({
  model,
  system,
  maxTokens: maxDraftTokens,
  messages: [{
    role: "user",
    content: [{
      type: "text",
      text: JSON.stringify({
        step: { number: execution.stepIndex + 1, subject: step.subject, body: step.body },
        contact: execution.fields,
        templateRendered: rendered
      })
    }]
  }],
  tools: [{
    name: "write_email",
    description: "The e-mail to send to the contact.",
    inputSchema: {
      type: "object",
      properties: {
        subject: { type: "string", description: "One line, no line breaks.", default: rendered.subject },
        body: { type: "string", description: "The e-mail body as simple HTML.", default: rendered.body }
      },
      required: ["subject", "body"]
    }
  }],
  toolChoice: { type: "tool", name: "write_email" }
})

/** The subject and body of the model's answer: its `write_email` call, else a JSON object in its text. */
const answerOf = (response: LlmResponse) => {
  const call = response.content.find((part) => part.type === "tool_call" && part.name === "write_email")
  if (call !== undefined && call.type === "tool_call") return Schema.decodeUnknownOption(DraftAnswer)(call.input)
  const text = response.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")
  return decodeModelJson(DraftAnswer, text)
}

/** The draft of `execution` for `step`, paid by the execution's organization; every failure is an outcome. */
export const draft = (step: SequenceStep | undefined, execution: ExecutionRecord) =>
  Effect.gen(function*() {
    if (step === undefined) return { _tag: "Failed", error: `The sequence has no step ${execution.stepIndex + 1} any more` } as const
    const rendered = renderedStep(step, execution)
    if (Result.isFailure(rendered)) {
      return { _tag: "Failed", error: `The step's template is malformed: ${rendered.failure.message}` } as const
    }
    const model = (yield* ModelCatalog).resolve(draftingModelTier)
    if (model === undefined) return { _tag: "Failed", error: `No model serves the ${draftingModelTier} tier` } as const
    const payer = { organizationId: execution.organizationId, companyId: execution.companyId, userId: null }
    const answered = yield* BilledLlm.generate(payer, "sequences", draftRequest(model.id, step, execution, rendered.success)).pipe(
      Effect.map(answerOf),
      Effect.result
    )
    if (Result.isFailure(answered)) {
      const failure = answered.failure
      return { _tag: "Failed", error: `The model failed: ${failure.message}` } as const
    }
    if (Option.isNone(answered.success)) {
      return { _tag: "Failed", error: "The model's answer had no subject and body" } as const
    }
    const { subject, body } = answered.success.value
    return { _tag: "Drafted", subject: subject.replace(/[\r\n]+/g, " ").trim(), body } as const
  }).pipe(Effect.map((outcome): DraftOutcome => outcome))
