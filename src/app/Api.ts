import { HttpApi, OpenApi } from "effect/http-api"
import { StrictQuery, strictBodies } from "../http/StrictInput.ts"
import { AdminApi } from "../admin/Api.ts"
import { AgentsApi, EmployeesApi } from "../agents/Api.ts"
import { CampaignsApi } from "../campaigns/Api.ts"
import { TrackingApi } from "../campaigns/TrackingApi.ts"
import { SequencesApi } from "../sequences/Api.ts"
import { CanvasesApi } from "../canvases/Api.ts"
import { CompaniesApi, CompanyUsersApi } from "../companies/Api.ts"
import { ContentApi } from "../content/Api.ts"
import { AnthropicApi, ChatApi, ModelsApi } from "../gateway/Api.ts"
import { FilesApi } from "../files/Api.ts"
import { DesignChatApi } from "../design/Api.ts"
import { DocumentsApi, KnowledgeApi } from "../documents/Api.ts"
import { HealthApi } from "../health/Api.ts"
import { ListsApi } from "../lists/Api.ts"
import { ApiKeysApi, KeysApi } from "../keys/Api.ts"
import { WebApi } from "../jobs/Api.ts"
import { McpApi } from "../mcp/Api.ts"
import { MeApi } from "../me/Api.ts"
import { MemoriesApi } from "../memories/Api.ts"
import { OrganizationsApi } from "../organizations/Api.ts"
import { ProjectsApi } from "../projects/Api.ts"
import { ScheduledTasksApi } from "../tasks/Api.ts"
import { TemplatesApi } from "../templates/Api.ts"

/** `group.endpoint` → `group_endpoint`: the spec's `<area>_<operationName>` operation ids. */
const areaOperationIds = (spec: Record<string, any>) => {
  for (const methods of Object.values<Record<string, { operationId?: string }>>(spec.paths ?? {})) {
    for (const operation of Object.values(methods)) {
      if (typeof operation?.operationId === "string") operation.operationId = operation.operationId.replace(".", "_")
    }
  }
  return spec
}

/**
 * The whole API, defined once: the server, the typed client, the OpenAPI
 * document and the MCP catalog all derive from it.
 */
export class Api extends HttpApi.make("platform")
  .add(HealthApi)
  .add(AdminApi)
  .add(MeApi)
  .add(ModelsApi)
  .add(ChatApi)
  .add(AnthropicApi)
  .add(ApiKeysApi)
  .add(KeysApi)
  .add(CompanyUsersApi)
  .add(CompaniesApi)
  .add(OrganizationsApi)
  .add(ProjectsApi)
  .add(MemoriesApi)
  .add(AgentsApi)
  .add(EmployeesApi)
  .add(ScheduledTasksApi)
  .add(CampaignsApi)
  .add(TrackingApi)
  .add(ListsApi)
  .add(TemplatesApi)
  .add(FilesApi)
  .add(DesignChatApi)
  .add(WebApi)
  .add(CanvasesApi)
  .add(DocumentsApi)
  .add(KnowledgeApi)
  .add(ContentApi)
  .add(SequencesApi)
  .add(McpApi)
  .annotate(OpenApi.Title, "Platform API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, "Multi-tenant business platform API. Every error answers {\"error\": \"…\"}.")
  .annotate(OpenApi.Transform, areaOperationIds)
  .annotate(HttpApi.PayloadParseOptions, strictBodies)
  // Last: an API middleware covers only the groups added before it.
  .middleware(StrictQuery)
{}
