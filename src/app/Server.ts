import { Console, Effect, Layer, Logger, Option, References, Tracer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { HttpApiBuilder, HttpApiScalar, OpenApi } from "effect/http-api"
import { firstRun } from "../accounts/admin/FirstRun.ts"
import { CompanyUsersCache } from "../accounts/companies/Http.ts"
import { Blob } from "../media/files/Blob.ts"
import { PrincipalLookupLive } from "../accounts/keys/Principals.ts"
import { Balances } from "../accounts/organizations/Balances.ts"
import { MembershipsCache } from "../accounts/organizations/Organizations.ts"
import { AuthenticationLive, AuthServices } from "../auth/Authentication.ts"
import { LlmLive } from "../models/llm/LlmLive.ts"
import { Mailer } from "../outreach/mail/Mailer.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { BrowserExtract } from "../media/browser/Extract.ts"
import { BrowserPool } from "../platform/BrowserPool.ts"
import { GuardedFetch } from "../platform/Outbound.ts"
import { Ffmpeg } from "../platform/Ffmpeg.ts"
import { Storage } from "../storage/Database.ts"
import { configuredStorage } from "./Storage.ts"
import { Credits } from "../accounts/usage/Credits.ts"
import { campaignsSender } from "../outreach/campaigns/CampaignsOutreach.ts"
import { OutreachSenders } from "../outreach/messages/Outreach.ts"
import { sequencesSender } from "../outreach/sequences/SequencesOutreach.ts"
import { Api } from "./Api.ts"
import { areaLayers } from "./Areas.ts"
import { ApiDocument } from "../http/Area.ts"
import { scalarConfig } from "./Reference.ts"
import { ConsoleRoutes } from "./Console.ts"
import { ShutdownReport } from "./Shutdown.ts"
import { ErrorResponsesLive, MaxBodySizeLive } from "../http/ErrorResponses.ts"
import { nodeServer } from "../http/NodeServer.ts"
import { StrictQueryLive } from "../http/StrictInput.ts"


/** Every route of the service: the HttpApi, its OpenAPI document, the offline reference page and the console. */
export const AppRoutes = HttpApiBuilder.layer(Api, { openapiPath: "/api/v0/openapi.json" }).pipe(
  Layer.provide(areaLayers("handlers")),
  Layer.provide(Layer.sync(ApiDocument, () => OpenApi.fromApi(Api))),
  Layer.provide([AuthenticationLive, StrictQueryLive]),
  Layer.provide(HttpApiScalar.layer(Api, { path: "/docs", scalar: scalarConfig })),
  Layer.provide(ConsoleRoutes),
  Layer.provide(ErrorResponsesLive),
  Layer.provide(ShutdownReport.counting)
)

/**
 * On the first start of an embedded database without any organization,
 * creates a default organization, company and owner and prints their keys,
 * once (`firstRun`: committed only after the keys were printed).
 */
export const FirstRunBootstrap = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const storage = yield* Storage
  const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
  if (!config.bootstrap || storage.backend !== "pglite" || Option.isNone(sql)) return
  yield* firstRun((created) => Console.log([
    "",
    "First start: created a default organization, company and owner (owner@localhost).",
    `  company id:             ${created.companyId}`,
    `  company API key:        ${created.apiKey}`,
    `  personal access key:    ${created.personalAccessKey}`,
    "These keys are shown only now and are not stored in readable form: copy them.",
    `Try: curl -H "X-API-Key: ${created.apiKey}" http://${config.host}:${config.port}/api/v0/me`,
    ""
  ].join("\n"))).pipe(Effect.provideService(SqlClient.SqlClient, sql.value), Effect.orDie)
}))

export const JsonLogger = Layer.unwrap(AppConfig.useSync((config) =>
  Layer.mergeAll(
    Logger.layer([Logger.consoleJson]),
    Layer.succeed(References.MinimumLogLevel, config.logLevel)
  )))

/**
 * The service exports no traces, so its spans would be work for nobody:
 * with the tracer off, every span (a request's, an outgoing call's, an
 * `Effect.fn`'s) is a no-op, and no trace headers go to model providers.
 */
export const TracingOff = Layer.mergeAll(
  Layer.succeed(References.TracerEnabled, false),
  // Outgoing calls check this one, not the tracer's switch, before making a span and its headers.
  Layer.succeed(Tracer.DisablePropagation, true)
)

/**
 * The service over a given HTTP server and storage: storage is built and
 * migrated first, then the listener opens (requests arriving now wait for the
 * handler, `hardenedServer`), then the first-run bootstrap, so that a start
 * that cannot bind its port fails before it shows first-start keys.
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
    Layer.provide(FirstRunBootstrap),
    Layer.provideMerge(http),
    Layer.provideMerge(MaxBodySizeLive),
    Layer.provideMerge(PrincipalLookupLive),
    Layer.provideMerge(Layer.mergeAll(MembershipsCache.layer, Balances.layer, CompanyUsersCache.layer)),
    Layer.provideMerge(AuthServices),
    Layer.provideMerge(LlmLive),
    Layer.provideMerge(Mailer.layer),
    // A guard of its own (fresh): a layer shared by reference is built once, and would hand other parts this guard's settings.
    Layer.provideMerge(BrowserExtract.layer.pipe(Layer.provide(Layer.fresh(GuardedFetch.layer)))),
    Layer.provideMerge(Layer.mergeAll(BrowserPool.layer, Ffmpeg.layer)),
    Layer.provideMerge(Blob.layer),
    Layer.provideMerge(Credits.layer),
    Layer.provideMerge(OutreachSenders.listing(campaignsSender, sequencesSender)),
    Layer.provideMerge(storage),
    Layer.provideMerge(ShutdownReport.layer),
    Layer.provide(TracingOff)
  )

/**
 * The server process: the service, then its background workers (scheduled
 * tasks, campaign sending, sequences, credit holds) over its services; stopping begins with the last
 * (`ShutdownReport.begins`).
 */
export const ServerLive = Layer.unwrap(AppConfig.useSync((config) =>
  ShutdownReport.begins.pipe(
    Layer.provideMerge(areaLayers("workers")),
    Layer.provideMerge(makeServer(
      nodeServer(config, { host: config.host, port: config.port }),
      configuredStorage,
      { logAddress: true }
    ))
  )))
