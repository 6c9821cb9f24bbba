import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BodyDocument, versionSchemas } from "../../http/BodyVersions.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageNumber, PageQuery, PageSize } from "../../platform/Pagination.ts"
import { Email, FutureDate, IsoDate, NonEmpty, Text } from "../../platform/Schemas.ts"

export const CampaignStatus = Schema.Literals(["draft", "scheduled", "sending", "paused", "sent", "cancelled", "failed"])
export type CampaignStatus = typeof CampaignStatus.Type

/** One header line: no line breaks (they would inject headers). */
const HeaderText = (max: number) =>
  Text(max).check(Schema.makeFilter((s: string) => !/[\r\n\0]/.test(s) || "must be a single line"))

export const Campaign = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** The creating user; null for a campaign made with a company API key. */
  userId: Schema.NullOr(Schema.String),
  name: Schema.String,
  subject: Schema.String,
  fromName: Schema.NullOr(Schema.String),
  fromEmail: Schema.NullOr(Schema.String),
  replyTo: Schema.NullOr(Schema.String),
  listId: Schema.NullOr(Schema.String),
  /** The smart list it sends to (set by send or schedule with smartListId), instead of listId. */
  smartListId: Schema.NullOr(Schema.String),
  status: CampaignStatus,
  bodyDocument: BodyDocument,
  /** The number of the body's current version; 0 until a body is first saved. */
  bodyVersion: Schema.Int,
  scheduledAt: Schema.NullOr(IsoDate),
  startedAt: Schema.NullOr(IsoDate),
  completedAt: Schema.NullOr(IsoDate),
  /** Why a campaign `failed`; null otherwise. */
  errorMessage: Schema.NullOr(Schema.String),
  created_date: IsoDate,
  updated_date: IsoDate
}).annotate({ identifier: "Campaign" })

const Subject = HeaderText(998)
const FromName = HeaderText(200)

export const NewCampaign = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  name: NonEmpty,
  subject: Subject,
  bodyDocument: Schema.optional(BodyDocument),
  fromName: Schema.optional(FromName),
  fromEmail: Schema.optional(Email),
  replyTo: Schema.optional(Email),
  listId: Schema.optional(NonEmpty)
})

/** Every field optional: only those supplied change; null clears a nullable one. */
export const CampaignPatch = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  name: Schema.optional(NonEmpty),
  subject: Schema.optional(Subject),
  bodyDocument: Schema.optional(BodyDocument),
  fromName: Schema.optional(Schema.NullOr(FromName)),
  fromEmail: Schema.optional(Schema.NullOr(Email)),
  replyTo: Schema.optional(Schema.NullOr(Email)),
  listId: Schema.optional(Schema.NullOr(NonEmpty))
})

/** One saved body version: without the body (list view), and with it. */
export const { Summary: CampaignVersionSummary, Version: CampaignVersion } = versionSchemas("CampaignVersion", {
  owner: "campaignId",
  body: "bodyDocument",
  Body: BodyDocument
})

const CompanyBody = Schema.Struct({ companyId: Schema.optional(Schema.String) })

/** An empty request body decodes as `null`, so the actions take no body as well as `{}`. */
const actionPayload = [CompanyBody, Schema.Null]

/** At most one of `listId` and `smartListId`; neither: what the campaign already names. */
export const SendBody = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  listId: Schema.optional(NonEmpty),
  smartListId: Schema.optional(NonEmpty)
})

export const ScheduleBody = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  scheduledAt: FutureDate,
  listId: Schema.optional(NonEmpty),
  smartListId: Schema.optional(NonEmpty)
})

export const RecipientStatus = Schema.Literals(["pending", "sent", "failed", "skipped", "uncertain"])
export type RecipientStatus = typeof RecipientStatus.Type

/** The spec's Campaign recipient; dates are ISO 8601 strings, null until they happen. */
export const CampaignRecipient = Schema.Struct({
  id: Schema.String,
  campaignId: Schema.String,
  listRowId: Schema.String,
  email: Schema.String,
  status: RecipientStatus,
  sentAt: Schema.NullOr(Schema.String),
  errorMessage: Schema.NullOr(Schema.String),
  opened: Schema.Boolean,
  clicked: Schema.Boolean,
  firstOpenedDate: Schema.NullOr(Schema.String),
  lastOpenedDate: Schema.NullOr(Schema.String),
  firstClickedDate: Schema.NullOr(Schema.String),
  lastClickedDate: Schema.NullOr(Schema.String),
  openCount: Schema.Int,
  clickCount: Schema.Int,
  /** When the contact first replied; null if not (yet). */
  repliedDate: Schema.NullOr(Schema.String),
  /** When a delivery status notification reported the message failed. */
  bouncedDate: Schema.NullOr(Schema.String),
  created_date: Schema.String,
  updated_date: Schema.String
}).annotate({ identifier: "CampaignRecipient" })

/** Over every recipient of the campaign, whatever the search; rates are fractions (0–1) of `sent`, 0 when none was sent. */
export const RecipientMetrics = Schema.Struct({
  total: Schema.Number,
  sent: Schema.Number,
  failed: Schema.Number,
  skipped: Schema.Number,
  /** Handed to the mail server by a process that died before the answer was recorded: maybe delivered, not sent again. */
  uncertain: Schema.Number,
  opened: Schema.Number,
  clicked: Schema.Number,
  /** Recipients who answered (the inbox heard it; absence notices and bounces do not count). */
  replied: Schema.Number,
  /** Recipients whose message a delivery status notification reported failed. */
  bounced: Schema.Number,
  openRate: Schema.Number,
  clickRate: Schema.Number,
  replyRate: Schema.Number
}).annotate({ identifier: "RecipientMetrics" })

export const RecipientPage = Schema.Struct({
  items: Schema.Array(CampaignRecipient),
  total: Schema.Int,
  metrics: RecipientMetrics
}).annotate({ identifier: "RecipientPage" })

export const RecipientsQuery = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  search: Schema.optional(Text(320)),
  page: Schema.optional(Schema.FiniteFromString.pipe(Schema.decodeTo(PageNumber))),
  pageSize: Schema.optional(Schema.FiniteFromString.pipe(Schema.decodeTo(PageSize(100))))
})

const campaignId = { campaignId: Schema.String }
const versionParams = { campaignId: Schema.String, version: Schema.FiniteFromString.pipe(Schema.decodeTo(PageNumber)) }
const created = HttpApiSchema.status(201)
const accepted = HttpApiSchema.status(202)
const changeErrors = [BadRequest, Forbidden, NotFound]


/** `POST /marketing-campaigns/{campaignId}/<name>`, answering the campaign. */
const action = <const Name extends string>(name: Name, summary: string, description: string) =>
  HttpApiEndpoint.post(name, `/marketing-campaigns/:campaignId/${name}`, {
    params: campaignId,
    payload: actionPayload,
    success: Campaign,
    error: changeErrors
  }).pipe(described({
    summary,
    does: `${description} A move the current status does not allow → 400 naming both statuses.`,
    who: "campaigns:write"
  }))

export class CampaignsApi extends HttpApiGroup.make("campaigns")
  .annotateMerge(OpenApi.annotations({
    description: "Marketing campaigns: versioned e-mail bodies, sending to a contact list (scheduled or now) with merge fields, spintax, open and click tracking and one-click unsubscribe, and the recipients with their metrics.",
    override: { "x-displayName": "Marketing campaigns" }
  })).add(
  HttpApiEndpoint.post("create", "/marketing-campaigns", {
    payload: NewCampaign,
    success: Campaign.pipe(created),
    error: changeErrors
  }).pipe(described({
    summary: "Create a campaign",
    does: `Creates a draft campaign; a bodyDocument given is saved as version 1. A listId that is not one of the company's lists → 404.`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.get("list", "/marketing-campaigns", { query: PageQuery, success: Page(Campaign), error: [Forbidden] })
    .pipe(described({
    summary: "List campaigns",
    does: `The company's campaigns, newest first, in the generic envelope.`,
    who: "campaigns:read"
  })),
  HttpApiEndpoint.get("get", "/marketing-campaigns/:campaignId", {
    params: campaignId,
    success: Campaign,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Get a campaign",
    does: `One campaign; another company's → 404.`,
    who: "campaigns:read"
  })),
  HttpApiEndpoint.patch("update", "/marketing-campaigns/:campaignId", {
    params: campaignId,
    payload: CampaignPatch,
    success: Campaign,
    error: changeErrors
  }).pipe(described({
    summary: "Change a campaign",
    does: `Changes the supplied fields of a draft or scheduled campaign (400 in any other status); a bodyDocument makes a new version.`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.delete("delete", "/marketing-campaigns/:campaignId", {
    params: campaignId,
    success: Campaign,
    error: changeErrors
  }).pipe(described({
    summary: "Delete a draft campaign",
    does: `Deletes a draft campaign with its versions; any other status → 400.`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.post("send", "/marketing-campaigns/:campaignId/send", {
    params: campaignId,
    payload: [SendBody, Schema.Null],
    success: Campaign.pipe(accepted),
    error: changeErrors
  }).pipe(described({
    summary: "Start sending now",
    does: `Starts a draft or scheduled campaign: one recipient per row of its list (listId here or on the campaign) or per lead its smart list (smartListId, here or from an earlier send or schedule) matches now, suppressed and duplicate addresses skipped; at most one of listId and smartListId (400 otherwise); the sending worker then delivers them. Answers 202 with status sending. Needs a list with rows, a subject and a body (400 otherwise).`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.post("schedule", "/marketing-campaigns/:campaignId/schedule", {
    params: campaignId,
    payload: ScheduleBody,
    success: Campaign,
    error: changeErrors
  }).pipe(described({
    summary: "Schedule a campaign",
    does: `Schedules a draft (or re-schedules a scheduled) campaign to start at scheduledAt (in the future), to its list or to a smart list (listId or smartListId, at most one), whose leads are the ones it matches at the start. Needs a list with rows (or a smart list matching a lead), a subject and a body (400 otherwise).`,
    who: "campaigns:write"
  })),
  action("pause", "Pause sending", "Stops a sending campaign from claiming further recipients; those in flight finish."),
  action("resume", "Resume sending", "Continues a paused campaign where it stopped."),
  action(
    "cancel",
    "Cancel a campaign",
    "Cancels a scheduled, sending or paused campaign; recipients not yet sent become skipped."
  ),
  HttpApiEndpoint.get("listVersions", "/marketing-campaigns/:campaignId/versions", {
    params: campaignId,
    query: PageQuery,
    success: Page(CampaignVersionSummary),
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "List body versions",
    does: `The campaign's saved body versions, newest first, without their bodies.`,
    who: "campaigns:read"
  })),
  HttpApiEndpoint.get("getVersion", "/marketing-campaigns/:campaignId/versions/:version", {
    params: versionParams,
    success: CampaignVersion,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Get a body version",
    does: `One saved body version with its bodyDocument; unknown version → 404.`,
    who: "campaigns:read"
  })),
  HttpApiEndpoint.post("restoreVersion", "/marketing-campaigns/:campaignId/versions/:version/restore", {
    params: versionParams,
    payload: actionPayload,
    success: Campaign,
    error: changeErrors
  }).pipe(described({
    summary: "Restore a body version",
    does: `Saves an earlier version's bodyDocument as a new version of a draft or scheduled campaign (400 otherwise).`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.get("listRecipients", "/marketing-campaigns/:campaignId/recipients", {
    params: campaignId,
    query: RecipientsQuery,
    success: RecipientPage,
    error: changeErrors
  }).pipe(described({
    summary: "List campaign recipients",
    does: `The recipients of a campaign, most recent first: search filters by case-insensitive substring of the e-mail; page (1-indexed) and pageSize (1–100, default 25) page them, and without either every match is answered (the legacy unpaginated result, at most the 10,000 most recent). metrics always covers every recipient.`,
    who: "campaigns:read"
  }))
).middleware(Authentication).prefix("/api/v0") {}
