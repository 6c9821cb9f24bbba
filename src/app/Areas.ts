import { Layer } from "effect"
import { HealthArea } from "../health/Area.ts"
import { AdminArea } from "../admin/Area.ts"
import { MeArea } from "../me/Area.ts"
import { GatewayArea } from "../gateway/Area.ts"
import { KeysArea } from "../keys/Area.ts"
import { CompaniesArea } from "../companies/Area.ts"
import { OrganizationsArea } from "../organizations/Area.ts"
import { ProjectsArea } from "../projects/Area.ts"
import { MemoriesArea } from "../memories/Area.ts"
import { AgentsArea } from "../agents/Area.ts"
import { DepartmentsArea } from "../departments/Area.ts"
import { TasksArea } from "../tasks/Area.ts"
import { CampaignsArea } from "../campaigns/Area.ts"
import { OutreachArea } from "../outreach/Area.ts"
import { LeadsArea } from "../leads/Area.ts"
import { ListsArea } from "../lists/Area.ts"
import { TemplatesArea } from "../templates/Area.ts"
import { FilesArea } from "../files/Area.ts"
import { DesignArea } from "../design/Area.ts"
import { JobsArea } from "../jobs/Area.ts"
import { CanvasesArea } from "../canvases/Area.ts"
import { BrowserArea } from "../browser/Area.ts"
import { DocumentsArea } from "../documents/Area.ts"
import { ContentArea } from "../content/Area.ts"
import { BrandArea } from "../brand/Area.ts"
import { SequencesArea } from "../sequences/Area.ts"
import { InboxArea } from "../inbox/Area.ts"
import { McpArea } from "../mcp/Area.ts"
import { UsersArea } from "../users/Area.ts"
import { UsageArea } from "../usage/Area.ts"
import { DomainsArea } from "../domains/Area.ts"
import { WebhooksArea } from "../webhooks/Area.ts"
import { ImagesArea } from "../images/Area.ts"
import { AudioArea } from "../audio/Area.ts"
import { PagesArea } from "../pages/Area.ts"

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
