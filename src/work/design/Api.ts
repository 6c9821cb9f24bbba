import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { described } from "../../http/Describe.ts"
import { BodyDocument } from "../../http/BodyVersions.ts"
import { SseEvent } from "../../models/gateway/Sse.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { NonBlankText, Text } from "../../platform/Schemas.ts"

/** Earlier turns of the conversation, oldest first. */
const HistoryTurn = Schema.Struct({
  role: Schema.Literals(["user", "assistant"]),
  content: Text(20_000)
})

const chatFields = {
  message: NonBlankText(20_000),
  /** The document the agent starts from (the editor's current state, not the stored one). */
  bodyDocument: BodyDocument,
  history: Schema.optional(Schema.Array(HistoryTurn).check(Schema.isMaxLength(50))),
  companyId: Schema.optional(Schema.String)
}

export const CampaignChatRequest = Schema.Struct(chatFields).annotate({ identifier: "DesignChatRequest" })

export const TemplateChatRequest = Schema.Struct({
  ...chatFields,
  /** Uploads of this template, given to the model as images. */
  attachments: Schema.optional(Schema.Array(Schema.String.check(Schema.isMaxLength(100))).check(Schema.isMaxLength(5)))
}).annotate({ identifier: "TemplateChatRequest" })

const events = HttpApiSchema.StreamSse({ events: SseEvent })
const errors = [BadRequest, Forbidden, NotFound]

const eventsDescription =
  "Answers `text/event-stream`: `text` {delta}, `tool_call` {id, name, arguments}, `tool_result` {id, name, result} or {id, name, error}, `files_changed` {version, bodyDocument} after each saved edit, and last exactly one of `done` {version, usage} or `error` {error}. Billed in credits by tokens (feature campaigns). A client that disconnects stops the agent; saved edits stay."

export class DesignChatApi extends HttpApiGroup.make("designChat")
  .annotateMerge(OpenApi.annotations({
    description: "AI design chats: a model edits a campaign's or template's e-mail HTML through tools, streamed as server-sent events, every edit saved as a version.",
    override: { "x-displayName": "Design chat" }
  }))
  .add(
    HttpApiEndpoint.post("campaignChat", "/marketing-campaigns/:campaignId/chat", {
      params: { campaignId: Schema.String },
      payload: CampaignChatRequest,
      success: events,
      error: errors
    }).pipe(described({
      summary: "Campaign design chat",
      does:
        `An AI designer edits the campaign's body through tools (read, replace, set text or attributes, insert, remove, subject, preheader), starting from the bodyDocument sent; every edit is saved as a new body version. ${eventsDescription} Errors come before the stream.`,
      who: "campaigns:write",
      errors: {
        400: "missing message or bodyDocument.html, html over 1,000,000 characters, a campaign no longer draft or scheduled",
        403: "naming the missing role or feature, or without credits",
        404: "for another company's campaign"
      }
    }))
  )
  .add(
    HttpApiEndpoint.post("templateChat", "/marketing-campaign-templates/:templateId/chat", {
      params: { templateId: Schema.String },
      payload: TemplateChatRequest,
      success: events,
      error: errors
    }).pipe(described({
      summary: "Template visual-builder chat",
      does:
        `The design chat on a campaign template; \`attachments\` (this template's upload ids) reach the model as images. ${eventsDescription} Errors come before the stream.`,
      who: "campaigns:write",
      errors: {
        400: "as the campaign chat or an unknown attachment",
        403: "naming the missing role or feature, or without credits",
        404: "for another company's template"
      }
    }))
  )
  .middleware(Authentication)
  .prefix("/api/v0") {}
