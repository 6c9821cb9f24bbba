import { Context, type Layer } from "effect"
import type { Array as Arr } from "effect"
import { HttpApi, type HttpApiGroup, type OpenApi } from "effect/http-api"
import type { SqlClient } from "effect/sql"
import { StrictQuery, strictBodies } from "./StrictInput.ts"

/** The API's id: every area's handlers and the whole API (`src/app/Api.ts`) share it. */
export const apiId = "platform"

/**
 * The API as one area's handlers see it: the whole API's id, strict bodies
 * and strict query, with only the area's groups. Handlers built on it are the
 * whole API's (a group is found by its identifier), so an area never imports
 * the composition root.
 */
export const areaApi = <const Groups extends Arr.NonEmptyReadonlyArray<HttpApiGroup.Constraint>>(...groups: Groups) =>
  strictApi(HttpApi.make(apiId).add(...groups))

/**
 * The API's rules for every endpoint, present and future: unknown body fields
 * and query parameters answer 400 (`StrictInput.ts`). Applied last, as an API
 * middleware covers only the groups added before it.
 */
export const strictApi = <Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<typeof apiId, Groups>) =>
  api.annotate(HttpApi.PayloadParseOptions, strictBodies).middleware(StrictQuery)

/**
 * What an area brings to the service, in one value the composition root lists
 * once (`src/app/Areas.ts`): its API groups, the layer implementing them, its
 * repositories (over the one `SqlClient`) and its background workers.
 */
export interface Area<
  Groups extends HttpApiGroup.Constraint = never,
  Handlers extends Layer.Any = never,
  Repositories extends Layer.Any = never,
  Workers extends Layer.Any = never
> {
  readonly name: string
  readonly groups: ReadonlyArray<Groups>
  readonly handlers: ReadonlyArray<Handlers>
  readonly repositories: ReadonlyArray<Repositories>
  readonly workers: ReadonlyArray<Workers>
}

/** Declares an area; every part but its name is optional. */
export const area = <
  const Groups extends HttpApiGroup.Constraint = never,
  Handlers extends Layer.Any = never,
  Repositories extends Layer.Layer<any, never, SqlClient.SqlClient> = never,
  Workers extends Layer.Any = never
>(parts: {
  readonly name: string
  readonly groups?: ReadonlyArray<Groups>
  readonly handlers?: ReadonlyArray<Handlers>
  readonly repositories?: ReadonlyArray<Repositories>
  readonly workers?: ReadonlyArray<Workers>
}): Area<Groups, Handlers, Repositories, Workers> => ({
  name: parts.name,
  groups: parts.groups ?? [],
  handlers: parts.handlers ?? [],
  repositories: parts.repositories ?? [],
  workers: parts.workers ?? []
})

/** The whole API's OpenAPI document, for what derives from it at run time (the MCP catalog). */
export class ApiDocument extends Context.Service<ApiDocument, OpenApi.OpenAPISpec>()("http/ApiDocument") {}
