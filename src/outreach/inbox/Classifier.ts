import { Effect, Option, Schema } from "effect"
import { decodeModelJson } from "../../work/content/ContentModel.ts"
import { type LlmRequest, type LlmResponse, ModelCatalog } from "../../models/llm/Llm.ts"
import * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import type { Payer } from "../../accounts/usage/Credits.ts"
import { Classification } from "./Api.ts"
import type { InboundMail } from "./InboundMail.ts"

/**
 * What a reply means for the outreach it answers. A bounce report is a
 * `bounce` without asking anyone; everything else goes to the model (billed
 * under `campaigns`), which answers with the `classify_reply` tool. The
 * rule-based reading below is the tool's default (and first choice): what the
 * offline `local` model would fill in, so with that model the rules answer
 * directly, unbilled; they also answer when the model fails.
 */

const rules: ReadonlyArray<readonly [Classification, RegExp]> = [
  ["bounce", /\b(undeliverable|delivery (status notification|has failed|failure)|mail delivery (failed|subsystem)|returned mail|address not found)\b/i],
  ["out_of_office", /\b(out of (the )?office|on (annual )?(leave|vacation|holiday)|away (from the office|until)|auto(matic)?[- ]?reply|limited access to (my )?e-?mail|back (in the office )?on)\b/i],
  ["unsubscribe", /\b(unsubscribe|remove me|take me off|stop (e-?mailing|contacting|sending)|opt[- ]?out|do not (contact|e-?mail) me)\b/i],
  ["not_interested", /\b(not interested|no thanks|no, thank you|not (a )?(good )?fit|not for us|we('re| are) (all )?set|not at this time|pass on this|no need)\b/i],
  ["interested", /\b(interested|sounds (good|great|interesting)|let'?s (talk|chat|meet|schedule|set up)|book a (call|meeting|demo)|tell me more|more (info|information|details)|send (me )?(over )?(the )?(details|pricing|info)|happy to (chat|talk|meet)|how much|pricing|available (on|for|next)|schedule a)\b/i]
]

/** The text a person wrote, without the quoted message below it. */
const ownWords = (text: string) => {
  const lines: Array<string> = []
  for (const line of text.split(/\r?\n/)) {
    if (/^On .{1,200} wrote:\s*$/.test(line) || /^-{2,}\s*(Original Message|Forwarded)/i.test(line) || /^From: /.test(line)) break
    if (!line.startsWith(">")) lines.push(line)
  }
  return lines.join("\n").slice(0, 4_000)
}

/** The offline reading: first matching rule over the subject and the reply's own words, else `other`. */
export const classifyByRules = (mail: Pick<InboundMail, "subject" | "text" | "bounce" | "automatic">): Classification => {
  if (mail.bounce !== undefined) return "bounce"
  const text = `${mail.subject}\n${ownWords(mail.text)}`
  return rules.find(([, pattern]) => pattern.test(text))?.[0] ?? "other"
}

export const classifyingModelTier = "fastest"

const system = "You classify one e-mail reply to a sales outreach message. Answer with the classify_reply tool: " +
  "interested (wants to talk, asks for details or pricing), not_interested (declines), out_of_office (an absence " +
  "notice), unsubscribe (asks to stop receiving mail), bounce (a delivery failure report), other (anything else)."

const ClassifyAnswer = Schema.Struct({ classification: Classification })

const request = (model: string, mail: InboundMail, byRules: Classification): LlmRequest => ({
  model,
  system,
  maxTokens: 50,
  messages: [{ role: "user", content: [{ type: "text", text: JSON.stringify({ subject: mail.subject, reply: ownWords(mail.text) }) }] }],
  tools: [{
    name: "classify_reply",
    description: "The class of the reply.",
    inputSchema: {
      type: "object",
      // The rules' answer first and as the default: what the offline model picks.
      properties: { classification: { type: "string", enum: [byRules, ...Classification.literals.filter((value) => value !== byRules)], default: byRules } },
      required: ["classification"]
    }
  }],
  toolChoice: { type: "tool", name: "classify_reply" }
})

const answerOf = (response: LlmResponse) => {
  const call = response.content.find((part) => part.type === "tool_call" && part.name === "classify_reply")
  if (call !== undefined && call.type === "tool_call") return Schema.decodeUnknownOption(ClassifyAnswer)(call.input)
  return decodeModelJson(ClassifyAnswer, response.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(""))
}

/**
 * The reply's class, by the model, paid by the payer `payer` finds (looked up only for a billed call); by the
 * rules when the model cannot answer (logged). The offline `local` model would answer the rules' reading (the
 * tool's default): it is not asked, and nothing is held or charged for a reading that cost nothing.
 */
export const classify = (mail: InboundMail, payer: Effect.Effect<Option.Option<Payer>>) =>
  Effect.gen(function*() {
    const byRules = classifyByRules(mail)
    if (byRules === "bounce") return byRules
    const model = (yield* ModelCatalog).resolve(classifyingModelTier)
    if (model === undefined || model.provider === "local") return byRules
    const paying = yield* payer
    if (Option.isNone(paying)) return byRules
    return yield* BilledLlm.generate(paying.value, "campaigns", request(model.id, mail, byRules)).pipe(
      Effect.map((response) => Option.match(answerOf(response), { onNone: () => byRules, onSome: (answer) => answer.classification })),
      Effect.catch((error) => Effect.as(Effect.logWarning("Reply classified by rules: the model failed", { reason: error.message }), byRules))
    )
  })
