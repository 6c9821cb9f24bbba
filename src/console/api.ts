import type { CompanyResource } from "../accounts/companies/Api.ts"
import type { Campaign, RecipientMetrics } from "../outreach/campaigns/Api.ts"
import type { CompanyKeySummary, KeyList, CreatedKey } from "../accounts/keys/Api.ts"
import type { Me } from "../auth/Principal.ts"
import type { OrganizationEntry, UsageEventResource, UsageSummary } from "../accounts/organizations/Api.ts"
import type { CreatedWebhook, Delivery, Webhook } from "../integrations/webhooks/Api.ts"
import type { EventType } from "../storage/Outbox.ts"
import type { Document, SearchResult } from "../work/documents/Api.ts"
import type { InboxMessage, Mailbox, Thread as InboxThreadSummary, ThreadWithMessages, Draft } from "../outreach/inbox/Api.ts"
import type { Agent, Employee } from "../work/agents/Api.ts"
import type { Thread as ChatThread, ThreadSummary as ChatThreadSummary } from "../work/agents/ChatApi.ts"
import type { Lead } from "../outreach/leads/Api.ts"
import type { SmartList } from "../outreach/leads/SmartListsApi.ts"
import type { LandingPage, PageStats } from "../media/pages/Api.ts"

/**
 * The console's only way to the service: the public API with the signed-in
 * personal access key and company id. Answer types are the JSON form
 * of the same Effect Schemas the server and the typed client derive from
 * (type-only imports: no schema code reaches the browser; docs/console.md says why).
 */

/** A schema's value as JSON carries it: dates as ISO 8601 strings. */
type Wire<T> = T extends Date ? string
  : T extends ReadonlyArray<infer E> ? ReadonlyArray<Wire<E>>
  : T extends object ? { readonly [K in keyof T]: Wire<T[K]> }
  : T

export type Company = Wire<typeof CompanyResource.Type>
export type CampaignRecord = Wire<typeof Campaign.Type>
export type Metrics = Wire<typeof RecipientMetrics.Type>
export type CompanyKey = Wire<typeof CompanyKeySummary.Type>
export type Keys = Wire<typeof KeyList.Type>
export type NewKey = Wire<typeof CreatedKey.Type>
export type Caller = Wire<typeof Me.Type>
export type Organization = Wire<typeof OrganizationEntry.Type>
export type UsageEvent = Wire<typeof UsageEventResource.Type>
export type Summary = Wire<typeof UsageSummary.Type>
export type WebhookRecord = Wire<typeof Webhook.Type>
export type DeliveryRecord = Wire<typeof Delivery.Type>
export type NewWebhook = Wire<typeof CreatedWebhook.Type>
export type WebhookEvent = EventType
export type DocumentRecord = Wire<typeof Document.Type>
export type Found = Wire<typeof SearchResult.Type>
export type MailboxRecord = Wire<typeof Mailbox.Type>
export type InboxThread = Wire<typeof InboxThreadSummary.Type>
export type InboxThreadWithMessages = Wire<typeof ThreadWithMessages.Type>
export type InboxMessageRecord = Wire<typeof InboxMessage.Type>
export type InboxDraft = Wire<typeof Draft.Type>
export type AgentRecord = Wire<typeof Agent.Type>
export type EmployeeRecord = Wire<typeof Employee.Type>
export type ChatThreadRecord = Wire<typeof ChatThread.Type>
export type ChatThreadSummaryRecord = Wire<typeof ChatThreadSummary.Type>
export type LeadRecord = Wire<typeof Lead.Type>
export type SmartListRecord = Wire<typeof SmartList.Type>
export type LandingPageRecord = Wire<typeof LandingPage.Type>
export type LandingPageStats = Wire<typeof PageStats.Type>
export interface Page<A> { readonly items: ReadonlyArray<A>; readonly total: number; readonly hasNext: boolean }

export interface Credentials { readonly key: string; readonly companyId: string }

/** The tab's session only (never `localStorage`): closing the tab signs out. */
export const session = {
  read: (): Credentials | undefined => {
    const key = sessionStorage.getItem("console.key")
    const companyId = sessionStorage.getItem("console.companyId")
    return key === null || companyId === null ? undefined : { key, companyId }
  },
  write: (credentials: Credentials) => {
    sessionStorage.setItem("console.key", credentials.key)
    sessionStorage.setItem("console.companyId", credentials.companyId)
  },
  clear: () => sessionStorage.clear()
}

/** A refusal of the API: its status and its `{"error"}` message. */
export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

/** Sends a request to `/api/v0<path>` as the signed-in person in the selected company; a refusal throws its `ApiError`. */
const send = async (
  credentials: Credentials,
  method: string,
  path: string,
  init: { body?: BodyInit; type?: string; signal?: AbortSignal } = {}
) => {
  const response = await fetch(`/api/v0${path}`, {
    method,
    headers: {
      "x-api-key": credentials.key,
      "x-company-id": credentials.companyId,
      ...(init.type === undefined ? {} : { "content-type": init.type })
    },
    ...(init.body === undefined ? {} : { body: init.body }),
    ...(init.signal === undefined ? {} : { signal: init.signal })
  })
  if (!response.ok) {
    const refusal = await response.json().catch(() => ({})) as { error?: string }
    throw new ApiError(response.status, refusal.error ?? response.statusText)
  }
  return response
}

/** Calls `/api/v0<path>` with a JSON body (if any) and answers its JSON (nothing for an empty answer). */
export const call = async <A>(credentials: Credentials, method: string, path: string, body?: unknown): Promise<A> => {
  const response = await send(credentials, method, path, body === undefined ? {} : { body: JSON.stringify(body), type: "application/json" })
  const text = await response.text()
  return (text === "" ? undefined : JSON.parse(text)) as A
}

export const get = <A>(credentials: Credentials, path: string) => call<A>(credentials, "GET", path)

/** Posts a multipart form (the browser sets its boundary) and answers the JSON. */
export const upload = async <A>(credentials: Credentials, path: string, form: FormData): Promise<A> =>
  await (await send(credentials, "POST", path, { body: form })).json() as A

/** Posts JSON and answers the response unread, for a body that streams (server-sent events); `signal` stops it. */
export const open = (credentials: Credentials, path: string, body: unknown, signal: AbortSignal) =>
  send(credentials, "POST", path, { body: JSON.stringify(body), type: "application/json", signal })
