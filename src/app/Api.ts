import type { Array as Arr } from "effect"
import { HttpApi, type HttpApiGroup, OpenApi } from "effect/http-api"
import { apiId, strictApi } from "../http/Area.ts"
import { areas } from "./Areas.ts"
import { introduction, referenceDocument } from "./Reference.ts"

/** `group.endpoint` → `group_endpoint`: the spec's `<area>_<operationName>` operation ids. */
const areaOperationIds = (spec: Record<string, any>) => {
  for (const methods of Object.values<Record<string, { operationId?: string }>>(spec.paths ?? {})) {
    for (const operation of Object.values(methods)) {
      if (typeof operation?.operationId === "string") operation.operationId = operation.operationId.replace(".", "_")
    }
  }
  return spec
}

/** Every area's groups, in the areas' order; typed as their union, so the typed client knows every endpoint. */
const groups = areas.flatMap((area): ReadonlyArray<HttpApiGroup.Constraint> => area.groups) as unknown as Arr.NonEmptyReadonlyArray<
  (typeof areas)[number]["groups"][number]
>

/**
 * The whole API, defined once: the server, the typed client, the OpenAPI
 * document and the MCP catalog all derive from it.
 */
export class Api extends strictApi(
  HttpApi.make(apiId).add(...groups)
    .annotate(OpenApi.Title, "Platform API")
    .annotate(OpenApi.Version, "1.0.0")
    .annotate(OpenApi.Description, introduction)
    .annotate(OpenApi.Transform, (spec) => referenceDocument(areaOperationIds(spec)))
) {}
