import { Context, Effect, Layer, SchemaAST } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApi, type HttpApiEndpoint, type HttpApiGroup, HttpApiMiddleware } from "effect/http-api"
import { BadRequest } from "../platform/Errors.ts"

/**
 * Strict input, as Stripe does it: a body field or query parameter an
 * endpoint does not declare answers 400 naming it, so that a typo never
 * silently does nothing. Bodies are decoded with `onExcessProperty: "error"`
 * (nested objects included); query strings are checked here, for endpoints
 * with and without a query schema alike.
 */

/** Query parameters every endpoint accepts: the authentication layer reads them. */
const alwaysAllowedQuery: ReadonlyArray<string> = ["companyId"]

/** Marks a group whose bodies and query strings follow another vendor's evolving API (unknown fields are ignored). */
export const AcceptsUnknownFields = Context.Reference<boolean>("http/AcceptsUnknownFields", { defaultValue: () => false })

/**
 * Annotations (`group.annotateMerge(acceptingUnknownFields)`) that let a group
 * accept and ignore unknown body fields and query parameters: the OpenAI- and
 * Anthropic-compatible APIs, whose vendors keep adding fields.
 */
export const acceptingUnknownFields = Context.make(HttpApi.PayloadParseOptions, {}).pipe(
  Context.add(AcceptsUnknownFields, true)
)

/** The parse options the whole API is annotated with: unknown body fields fail to decode. */
export const strictBodies = { onExcessProperty: "error" } as const

export class StrictQuery extends HttpApiMiddleware.Service<StrictQuery>()("http/StrictQuery", {
  error: [BadRequest]
}) {}

const declaredQueryKeys = new WeakMap<HttpApiEndpoint.Top, ReadonlySet<string> | "any">()

/** The query parameters an endpoint accepts, or "any" for lenient groups and free-form query schemas. */
const acceptedQuery = (endpoint: HttpApiEndpoint.Top, group: HttpApiGroup.Top): ReadonlySet<string> | "any" => {
  const known = declaredQueryKeys.get(endpoint)
  if (known !== undefined) return known
  const lenient = Context.get(group.annotations, AcceptsUnknownFields)
  // The names on the wire: the encoded side of the query schema.
  const ast = endpoint.query === undefined ? undefined : SchemaAST.toEncoded(endpoint.query.ast)
  const accepted = lenient || (ast !== undefined && (!SchemaAST.isObjects(ast) || ast.indexSignatures.length > 0))
    ? "any"
    : new Set([...alwaysAllowedQuery, ...(ast?.propertySignatures.map((property) => String(property.name)) ?? [])])
  declaredQueryKeys.set(endpoint, accepted)
  return accepted
}

export const StrictQueryLive = Layer.succeed(StrictQuery, (handler, { endpoint, group }) =>
  Effect.gen(function*() {
    const accepted = acceptedQuery(endpoint, group)
    if (accepted !== "any") {
      const query = yield* HttpServerRequest.ParsedSearchParams
      const unknown = Object.keys(query).find((name) => !accepted.has(name))
      if (unknown !== undefined) return yield* new BadRequest({ error: `Unknown query parameter "${unknown}"` })
    }
    return yield* handler
  }))
