import { NodeHttpServer } from "@effect/platform-node"
import { Console, Duration, Effect, Layer, Logger, References } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import { createServer } from "node:http"
import * as Admin from "../admin/Admin.ts"
import { AdminAuthLive, AdminLive } from "../admin/Http.ts"
import { AgentsLive, EmployeesLive } from "../agents/Http.ts"
import { CampaignsLive } from "../campaigns/Http.ts"
import { TrackingLive } from "../campaigns/TrackingHttp.ts"
import { CampaignWorkerLive } from "../campaigns/CampaignWorker.ts"
import { CompaniesLive, CompanyUsersLive } from "../companies/Http.ts"
import { GatewayLive } from "../gateway/Http.ts"
import { HealthLive } from "../health/Http.ts"
import { ListsLive } from "../lists/Http.ts"
import { ApiKeysLive, KeysLive } from "../keys/Http.ts"
import { MeLive } from "../me/Http.ts"
import { MemoriesLive } from "../memories/Http.ts"
import { OrganizationsLive } from "../organizations/Http.ts"
import { ProjectsLive } from "../projects/Http.ts"
import { ScheduledTasksLive } from "../tasks/Http.ts"
import { SchedulerLive } from "../tasks/Scheduler.ts"
import { AuthenticationLive, AuthServices } from "../auth/Authentication.ts"
import { LlmLive } from "../llm/LlmLive.ts"
import { Mailer } from "../mail/Mailer.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { Storage } from "../storage/Database.ts"
import { configuredStorage } from "./Storage.ts"
import { Credits } from "../usage/Credits.ts"
import { Api } from "./Api.ts"
import { ErrorResponsesLive, MaxBodySizeLive } from "../http/ErrorResponses.ts"

/** Every route of the service: the HttpApi, its OpenAPI document and the offline reference page. */
export const AppRoutes = HttpApiBuilder.layer(Api, { openapiPath: "/api/v0/openapi.json" }).pipe(
  Layer.provide([
    HealthLive,
    AdminLive.pipe(Layer.provide(AdminAuthLive)),
    MeLive,
    ApiKeysLive,
    KeysLive,
    CompanyUsersLive,
    CompaniesLive,
    OrganizationsLive,
    GatewayLive,
    ProjectsLive,
    MemoriesLive,
    AgentsLive,
    EmployeesLive,
    ScheduledTasksLive,
    CampaignsLive,
    TrackingLive,
    ListsLive
  ]),
  Layer.provide(AuthenticationLive),
  Layer.provide(HttpApiScalar.layer(Api, { path: "/docs" })),
  Layer.provide(ErrorResponsesLive)
)

/**
 * On the first start of an empty embedded database, creates a default
 * organization, company and owner and prints their keys, once.
 */
export const FirstRunBootstrap = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const storage = yield* Storage
  if (!config.bootstrap || storage.backend !== "pglite" || !storage.fresh) return
  const created = yield* Effect.orDie(
    Admin.bootstrap({ organization: "Default organization", company: "Default company", email: "owner@localhost" })
  )
  yield* Console.log([
    "",
    "First start: created a default organization, company and owner (owner@localhost).",
    `  company id:             ${created.companyId}`,
    `  company API key:        ${created.apiKey}`,
    `  personal access key:    ${created.personalAccessKey}`,
    "These keys are shown only now and are not stored in readable form: copy them.",
    `Try: curl -H "X-API-Key: ${created.apiKey}" http://${config.host}:${config.port}/api/v0/me`,
    ""
  ].join("\n"))
}))

export const JsonLogger = Layer.unwrap(AppConfig.useSync((config) =>
  Layer.mergeAll(
    Logger.layer([Logger.consoleJson]),
    Layer.succeed(References.MinimumLogLevel, config.logLevel)
  )))

/**
 * The service over a given HTTP server and storage: storage is built and
 * migrated first, then the first-run bootstrap, then the listener opens, so
 * no request can arrive before the service is ready.
 */
export const makeServer = <HA, HE, SA, SE, SR>(
  http: Layer.Layer<HA | HttpServer.HttpServer, HE>,
  storage: Layer.Layer<SA, SE, SR>,
  options: { readonly logAddress: boolean }
) =>
  HttpRouter.serve(AppRoutes, {
    disableLogger: true,
    disableListenLog: !options.logAddress,
    // Long ids must reach their handler (and its 404 or 400), not fail routing as "no route".
    routerConfig: { maxParamLength: 1000 }
  }).pipe(
    Layer.provideMerge(http),
    Layer.provideMerge(MaxBodySizeLive),
    Layer.provide(FirstRunBootstrap),
    Layer.provideMerge(AuthServices),
    Layer.provideMerge(LlmLive),
    Layer.provideMerge(Mailer.layer),
    Layer.provideMerge(Credits.layer),
    Layer.provideMerge(storage)
  )

/** The server process: the service, then the scheduled-task and campaign workers over its storage. */
export const ServerLive = Layer.unwrap(AppConfig.useSync((config) =>
  Layer.mergeAll(SchedulerLive, CampaignWorkerLive).pipe(Layer.provideMerge(makeServer(
    NodeHttpServer.layer(createServer, {
      host: config.host,
      port: config.port,
      gracefulShutdownTimeout: Duration.millis(config.shutdownTimeoutMs)
    }),
    configuredStorage,
    { logAddress: true }
  )))
))
