import { Layer } from "effect"
import { HealthArea } from "../accounts/health/Area.ts"
import { AdminArea } from "../accounts/admin/Area.ts"
import { MeArea } from "../accounts/me/Area.ts"
import { GatewayArea } from "../models/gateway/Area.ts"
import { KeysArea } from "../accounts/keys/Area.ts"
import { CompaniesArea } from "../accounts/companies/Area.ts"
import { OrganizationsArea } from "../accounts/organizations/Area.ts"
import { ProjectsArea } from "../work/projects/Area.ts"
import { MemoriesArea } from "../work/memories/Area.ts"
import { AgentsArea } from "../work/agents/Area.ts"
import { DepartmentsArea } from "../work/departments/Area.ts"
import { TasksArea } from "../work/tasks/Area.ts"
import { CampaignsArea } from "../outreach/campaigns/Area.ts"
import { OutreachArea } from "../outreach/messages/Area.ts"
import { LeadsArea } from "../outreach/leads/Area.ts"
import { ListsArea } from "../outreach/lists/Area.ts"
import { TemplatesArea } from "../outreach/templates/Area.ts"
import { FilesArea } from "../media/files/Area.ts"
import { DesignArea } from "../work/design/Area.ts"
import { JobsArea } from "../work/jobs/Area.ts"
import { CanvasesArea } from "../media/canvases/Area.ts"
import { BrowserArea } from "../media/browser/Area.ts"
import { DocumentsArea } from "../work/documents/Area.ts"
import { ContentArea } from "../work/content/Area.ts"
import { BrandArea } from "../work/brand/Area.ts"
import { SequencesArea } from "../outreach/sequences/Area.ts"
import { InboxArea } from "../outreach/inbox/Area.ts"
import { McpArea } from "../models/mcp/Area.ts"
import { UsersArea } from "../accounts/users/Area.ts"
import { UsageArea } from "../accounts/usage/Area.ts"
import { DomainsArea } from "../outreach/domains/Area.ts"
import { WebhooksArea } from "../integrations/webhooks/Area.ts"
import { ImagesArea } from "../media/images/Area.ts"
import { AudioArea } from "../media/audio/Area.ts"
import { PagesArea } from "../media/pages/Area.ts"

/**
 * Every area of the service, once: the API (`Api.ts`), the server
 * (`Server.ts`) and the storage (`Storage.ts`) are assembled from this list,
 * in this order (the order of the API's groups in the OpenAPI document). A new
 * area adds one line.
 */
export const areas = [
  HealthArea,
  AdminArea,
  MeArea,
  GatewayArea,
  KeysArea,
  CompaniesArea,
  OrganizationsArea,
  ProjectsArea,
  MemoriesArea,
  AgentsArea,
  DepartmentsArea,
  TasksArea,
  CampaignsArea,
  OutreachArea,
  LeadsArea,
  ListsArea,
  TemplatesArea,
  FilesArea,
  DesignArea,
  JobsArea,
  CanvasesArea,
  BrowserArea,
  DocumentsArea,
  ContentArea,
  BrandArea,
  SequencesArea,
  InboxArea,
  McpArea,
  UsersArea,
  UsageArea,
  DomainsArea,
  WebhooksArea,
  ImagesArea,
  AudioArea,
  PagesArea,
] as const

type AreaOf = (typeof areas)[number]

/**
 * One kind of every area's layers (handlers, repositories or workers), merged
 * into one layer whose types are their union's, so the compiler still checks
 * what each needs.
 */
export const areaLayers = <const Kind extends "handlers" | "repositories" | "workers">(kind: Kind) => {
  const layers = areas.flatMap((area): ReadonlyArray<AreaOf[Kind][number]> => area[kind])
  return Layer.mergeAll(...(layers as unknown as [AreaOf[Kind][number], ...Array<AreaOf[Kind][number]>]))
}
