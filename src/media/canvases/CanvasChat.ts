import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { brandGuide, type BrandGuide, withBrand } from "../../work/brand/BrandGuide.ts"
import { conversation, open } from "../../work/design/DesignChat.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { orRefuse, type Refusal } from "../../platform/Refusal.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import { payerOf } from "../../accounts/usage/Credits.ts"
import { type CanvasChatRequest, type CanvasMessage, maxCanvasHtml } from "./Api.ts"
import { find, saveHtml } from "./Canvases.ts"
import { CanvasesRepo, type MessageRecord } from "./CanvasesRepo.ts"
import { CanvasThreadNotFound } from "./Errors.ts"

/**
 * The canvas chat: the design chat (src/work/design/DesignChat.ts — the one agent
 * loop with the HTML tools, billing and events) over a canvas's stored HTML,
 * with the thread's earlier turns and the brand kit; every edit is the
 * canvas's next version, and each finished turn is kept in the thread.
 * Billed under feature `content`. Decisions in docs/canvases.md.
 */

const systemPrompt = readFileSync(new URL("../../../prompts/canvas-chat/system.md", import.meta.url), "utf8")

/** Earlier turns the model reads with a new message (the newest ones). */
const historyTurns = 20

/** The prompt with the brand kit, and its colours and fonts as CSS variables the page can use. */
const canvasSystem = (guide: BrandGuide) => {
  const system = withBrand(systemPrompt, guide)
  return guide.css === ""
    ? system
    : `${system}\nThe brand's colours and fonts as CSS variables; put this rule in the page's <style> to use them: \`${guide.css}\``
}

const toMessage = (record: MessageRecord): typeof CanvasMessage.Type => ({
  id: record.id,
  threadId: record.threadId,
  role: record.role,
  content: record.content,
  created: record.createdAt.getTime()
})

const findThread = (companyId: string, canvasId: string, threadId: string) =>
  Effect.flatMap(
    CanvasesRepo.use((repo) => repo.getThread(companyId, canvasId, threadId)),
    orRefuse(() => new CanvasThreadNotFound({ id: threadId }))
  )

export const listMessages = Effect.fn("CanvasChat.listMessages")(function*(
  canvasId: string,
  threadId: string,
  request: PageRequest
) {
  const { principal } = yield* Authorized("canvases:read")
  yield* findThread(principal.companyId, canvasId, threadId)
  const { rows, total } = yield* CanvasesRepo.use((repo) => repo.listMessages(principal.companyId, threadId, windowOf(request)))
  return toPage(rows.map(toMessage), total, request)
})

/** Opens the chat's event stream (errors before it are statuses; see `open`). */
export const chat = Effect.fn("CanvasChat.chat")(function*(
  canvasId: string,
  threadId: string,
  input: typeof CanvasChatRequest.Type
) {
  yield* Authorized("canvases:write")
  const principal = yield* requireCompany(input.companyId)
  const canvas = yield* find(principal.companyId, canvasId)
  const thread = yield* findThread(principal.companyId, canvasId, threadId)
  const earlier = yield* CanvasesRepo.use((repo) =>
    repo.listMessages(principal.companyId, thread.id, { offset: 0, limit: historyTurns })
  )
  const services = yield* Effect.context<Effect.Services<ReturnType<typeof saveHtml>>>()
  const keep = (answer: string) =>
    Effect.gen(function*() {
      const now = yield* currentDate
      const turn = (role: MessageRecord["role"], content: string): MessageRecord => ({
        id: newId("cmsg"),
        threadId: thread.id,
        companyId: principal.companyId,
        role,
        content,
        createdAt: now
      })
      const messages = [turn("user", input.message), turn("assistant", answer)]
      yield* CanvasesRepo.use((repo) => repo.addMessages(messages))
    }).pipe(Effect.provideContext(services))
  return yield* open({
    payer: payerOf(principal),
    feature: "content",
    system: canvasSystem(yield* brandGuide(principal.companyId)),
    messages: conversation([...earlier.rows].reverse(), input.message),
    html: canvas.html,
    version: canvas.htmlVersion,
    target: {
      maxHtmlChars: maxCanvasHtml,
      saveHtml: (html) =>
        saveHtml(principal.companyId, canvas.id, html, "chat").pipe(
          Effect.map((saved) => ({ version: saved.htmlVersion, html: saved.html })),
          Effect.mapError((refused: Refusal) => refused.message),
          Effect.provideContext(services)
        )
    },
    record: keep
  })
})
