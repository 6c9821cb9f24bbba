import { Context, Data, Effect, Layer, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { CompaniesRepo } from "../companies/CompaniesRepo.ts"
import { hashKey, kindOf } from "../keys/KeyFormat.ts"
import { KeysRepo } from "../keys/KeysRepo.ts"
import { OrganizationsRepo } from "../organizations/OrganizationsRepo.ts"
import { BadRequest, InternalError, NotFound, RateLimited, Unauthorized } from "../platform/Errors.ts"
import { CurrentPrincipal, type Principal } from "./Principal.ts"
import { AccessRevision } from "./AccessRevision.ts"
import { RateLimiter, type Taken } from "./RateLimiter.ts"

/**
 * Authentication for every `/api/v0` endpoint: a company API key or a
 * personal access key in `X-API-Key` or `Authorization: Bearer`, plus the
 * company id (`X-Company-ID` or query `companyId`) for personal keys.
 */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentPrincipal }>()(
  "Authentication",
  {
    // InternalError: any authenticated call may answer 500, and the typed client then decodes it by tag.
    error: [BadRequest, Unauthorized, NotFound, RateLimited, InternalError],
    security: {
      apiKey: HttpApiSecurity.apiKey({ key: "X-API-Key", in: "header" }),
      bearer: HttpApiSecurity.bearer
    }
  }
) {}

/**
 * Resolved principals, so that a request costs no database round trip for
 * its credential. An entry is trusted only at the access revision it was
 * resolved at (`AccessRevision`): a revoked key or a changed company user
 * fails on the next request in every process. Entries also expire on their own.
 */
export class PrincipalCache extends Context.Service<PrincipalCache, {
  readonly get: (key: string) => { readonly principal: Principal; readonly revision: number } | undefined
  readonly set: (key: string, principal: Principal, validUntil: number, revision: number) => void
  /** Records an access change: every process re-resolves its principals. */
  readonly invalidate: Effect.Effect<void>
  /**
   * Well-formed credentials no key has: a key's secret is drawn at random when
   * it is created, so one that is unknown now stays unknown, and remembering
   * it spares the database a lookup per retry of a made-up or revoked key.
   */
  readonly isUnknown: (credential: string) => boolean
  readonly rememberUnknown: (credential: string) => void
}>()("auth/PrincipalCache") {
  static readonly ttlMs = 60_000
  static readonly unknownLimit = 10_000

  static readonly layer = Layer.effect(PrincipalCache, Effect.gen(function*() {
    const entries = new Map<string, { principal: Principal; validUntil: number; revision: number }>()
    const unknown = new Map<string, number>()
    const revisions = yield* AccessRevision
    return {
      get: (key) => {
        const entry = entries.get(key)
        if (entry === undefined) return undefined
        if (entry.validUntil > Date.now()) return entry
        entries.delete(key)
        return undefined
      },
      set: (key, principal, validUntil, revision) => void entries.set(key, { principal, validUntil, revision }),
      invalidate: Effect.andThen(Effect.sync(() => entries.clear()), revisions.bump),
      isUnknown: (credential) => {
        const until = unknown.get(credential)
        if (until === undefined) return false
        if (until > Date.now()) return true
        unknown.delete(credential)
        return false
      },
      rememberUnknown: (credential) => {
        if (unknown.size >= PrincipalCache.unknownLimit) unknown.delete(unknown.keys().next().value!)
        unknown.set(credential, Date.now() + PrincipalCache.ttlMs)
      }
    }
  }))
}

const unauthorized = (error: string) => new Unauthorized({ error })

/** No stored key has this credential's hash (answered as 401 "Invalid API key"). */
class UnknownKey extends Data.TaggedError("UnknownKey") {}
const companyNotFound = (companyId: string) => new NotFound({ error: `Company ${companyId} not found` })

/** A company key acts as the user who created it: it stops working when that user leaves the company. */
const creatorGone = unauthorized("This API key's creator no longer belongs to its company: create a new key")

/** The credential and company id a request carries; headers only, never logged. */
const bearerPrefix = /^bearer\s+/i

/** `companyId` values of the query; most requests carry none, so the query is parsed only when it may. */
const companyIdsInQuery = (url: string): ReadonlyArray<string> => {
  const query = url.indexOf("?")
  return query === -1 || !url.includes("companyId", query)
    ? []
    : new URLSearchParams(url.slice(query + 1)).getAll("companyId")
}

const readCredentials = (request: HttpServerRequest.HttpServerRequest) => {
  const apiKey = request.headers["x-api-key"]?.trim()
  const authorization = request.headers["authorization"]
  const credential = apiKey !== undefined && apiKey !== ""
    ? apiKey
    : authorization !== undefined && bearerPrefix.test(authorization)
    ? authorization.replace(bearerPrefix, "").trim()
    : ""
  if (credential === "") return Effect.fail(unauthorized("Missing API key: send X-API-Key or Authorization: Bearer"))
  const fromHeader = request.headers["x-company-id"]?.trim() || undefined
  const fromQuery = companyIdsInQuery(request.url)
  if (fromQuery.some((id) => id !== fromQuery[0])) {
    return Effect.fail(new BadRequest({ error: "Conflicting companyId query parameters" }))
  }
  if (fromHeader !== undefined && fromQuery[0] !== undefined && fromHeader !== fromQuery[0]) {
    return Effect.fail(
      new BadRequest({ error: "Conflicting company ids: the X-Company-ID header and the companyId query differ" })
    )
  }
  return Effect.succeed({ credential, companyId: fromHeader ?? (fromQuery[0] || undefined) })
}

const resolvePrincipal = Effect.fn("Authentication.resolve")(function*(
  credential: string,
  requestedCompanyId: string | undefined
) {
  const kind = kindOf(credential)
  if (kind === undefined) return yield* unauthorized("Invalid API key")
  const keyHash = hashKey(credential)
  const keys = yield* KeysRepo
  const companies = yield* CompaniesRepo
  const organizations = yield* OrganizationsRepo
  let companyId: string
  let keyId: string
  let userId: string
  let validUntil = Date.now() + PrincipalCache.ttlMs
  if (kind === "company") {
    const key = yield* keys.findCompanyKeyByHash(keyHash)
    if (Option.isNone(key)) return yield* new UnknownKey()
    if (requestedCompanyId !== undefined && requestedCompanyId !== key.value.companyId) {
      return yield* companyNotFound(requestedCompanyId)
    }
    if (key.value.createdByUserId === null) return yield* creatorGone
    companyId = key.value.companyId
    keyId = key.value.id
    userId = key.value.createdByUserId
  } else {
    const key = yield* keys.findPersonalKeyByHash(keyHash)
    if (Option.isNone(key)) return yield* new UnknownKey()
    const expiresAt = key.value.expiresAt?.getTime()
    if (expiresAt !== undefined && expiresAt <= Date.now()) return yield* unauthorized("API key expired")
    if (requestedCompanyId === undefined) {
      return yield* unauthorized("A personal access key needs the company id: send X-Company-ID or the companyId query")
    }
    companyId = requestedCompanyId
    keyId = key.value.id
    userId = key.value.userId
    if (expiresAt !== undefined) validUntil = Math.min(validUntil, expiresAt)
  }
  // The acting user's current role: a company key has its creator's powers, and none once they left the company.
  const membership = yield* companies.getUser(companyId, userId)
  if (Option.isNone(membership)) return yield* (kind === "company" ? creatorGone : companyNotFound(companyId))
  const company = yield* companies.get(companyId)
  if (Option.isNone(company)) return yield* companyNotFound(companyId)
  const organization = yield* organizations.get(company.value.organizationId)
  if (Option.isNone(organization)) return yield* companyNotFound(companyId)
  const principal: Principal = {
    keyKind: kind,
    keyId,
    credentialHash: keyHash,
    companyId,
    companyName: company.value.name,
    organizationId: organization.value.id,
    plan: organization.value.subscriptionType,
    userId,
    role: membership.value.role,
    allowedFeatures: membership.value.allowedFeatures
  }
  return { principal, validUntil }
})

export const AuthenticationLive = Layer.effect(Authentication, Effect.gen(function*() {
  const cache = yield* PrincipalCache
  const limiter = yield* RateLimiter
  const revisions = yield* AccessRevision
  const context = yield* Effect.context<KeysRepo | CompaniesRepo | OrganizationsRepo>()
  const resolveAndCache = (cacheKey: string, credential: string, companyId: string | undefined, revision: number) =>
    Effect.provideContext(resolvePrincipal(credential, companyId), context).pipe(
      Effect.map((resolved) => {
        cache.set(cacheKey, resolved.principal, resolved.validUntil, revision)
        return resolved.principal
      }),
      Effect.catchTag("UnknownKey", () => {
        cache.rememberUnknown(credential)
        return Effect.fail(unauthorized("Invalid API key"))
      })
    )
  const authenticate = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const { credential, companyId } = yield* readCredentials(request)
      const cacheKey = `${credential}\u0000${companyId ?? ""}`
      const cached = cache.get(cacheKey)
      let principal: Principal
      let taken: Taken
      if (cached === undefined) {
        if (cache.isUnknown(credential)) return yield* unauthorized("Invalid API key")
        principal = yield* resolveAndCache(cacheKey, credential, companyId, yield* revisions.current)
        taken = yield* limiter.take(principal.credentialHash)
      } else {
        taken = yield* limiter.take(cached.principal.credentialHash)
        principal = taken.revision === cached.revision
          ? cached.principal
          : yield* resolveAndCache(cacheKey, credential, companyId, taken.revision)
      }
      const { decision } = taken
      const headers = {
        "ratelimit-limit": String(decision.limit),
        "ratelimit-remaining": String(decision.remaining),
        "ratelimit-reset": String(decision.resetSeconds)
      }
      if (!decision.allowed) {
        return HttpServerResponse.jsonUnsafe(
          { error: `Rate limit exceeded: ${decision.limit} requests per minute; retry in ${decision.retryAfterSeconds} s` },
          { status: 429, headers: { ...headers, "retry-after": String(decision.retryAfterSeconds) } }
        )
      }
      const response = yield* Effect.provideService(handler, CurrentPrincipal, principal)
      return HttpServerResponse.setHeaders(response, headers)
    })
  return { apiKey: authenticate, bearer: authenticate }
}))

/** What the middleware and handlers share per process: the principal cache, the rate limiter, the access revision. */
export const AuthServices = Layer.mergeAll(PrincipalCache.layer, RateLimiter.layer).pipe(
  Layer.provideMerge(AccessRevision.layer)
)

/**
 * A company id the client sent in a body, path or query must be the
 * principal's: another company than a company key's answers 404 (existence is
 * not revealed); one that contradicts the company a personal key's request
 * named answers 400.
 */
export const requireCompany = (companyId: string | undefined) =>
  Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
    if (companyId === undefined || companyId === principal.companyId) return principal
    // A personal key's request always names its company (header or query).
    if (principal.keyKind === "personal") {
      return yield* new BadRequest({ error: `Conflicting company ids: ${companyId} differs from ${principal.companyId}` })
    }
    return yield* companyNotFound(companyId)
  })

