import { Context, Deferred, Effect, type Exit, Layer } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { BadRequest, InternalError, NotFound, RateLimited, Unauthorized } from "../platform/Errors.ts"
import { CurrentPrincipal, type Principal } from "./Principal.ts"
import { PrincipalLookup } from "./PrincipalLookup.ts"
import { AccessRevision } from "./AccessRevision.ts"
import { RateLimiter, type Taken } from "./RateLimiter.ts"
import { RequestRevision } from "./RevisionCache.ts"

/**
 * Authentication for every `/api/v0` endpoint: a company API key or a
 * personal access key in `X-API-Key` or `Authorization: Bearer`, plus the
 * company id (`X-Company-ID` or query `companyId`) for personal keys.
 */
export class Authentication extends HttpApiMiddleware.Service<Authentication, {
  provides: CurrentPrincipal | RequestRevision
}>()(
  "Authentication",
  {
    // InternalError: any authenticated call may answer 500, and the typed client then decodes it by tag.
    error: [BadRequest, Unauthorized, NotFound, RateLimited, InternalError],
    // The middleware reads either header itself; bearer goes first because the framework's decoding of
    // its credential is a plain header read, where the API key's is a schema decode that fails without it.
    security: {
      bearer: HttpApiSecurity.bearer,
      apiKey: HttpApiSecurity.apiKey({ key: "X-API-Key", in: "header" })
    }
  }
) {}

/**
 * Resolved principals, so that a request costs no database round trip for
 * its credential. An entry is trusted only at the access revision it was
 * resolved at (`AccessRevision`): a revoked key or a changed company user
 * fails on the next request in every process (every such write goes through
 * `AccessRevision.changing`). Entries also expire on their own.
 */
export class PrincipalCache extends Context.Service<PrincipalCache, {
  readonly get: (key: string) => { readonly principal: Principal; readonly revision: number } | undefined
  readonly set: (key: string, principal: Principal, validUntil: number, revision: number) => void
  /**
   * Well-formed credentials no key has: a key's secret is drawn at random when
   * it is created, so one that is unknown now stays unknown, and remembering
   * it spares the database a lookup per retry of a made-up or revoked key.
   */
  readonly isUnknown: (credential: string) => boolean
  readonly rememberUnknown: (credential: string) => void
}>()("auth/PrincipalCache") {
  static readonly ttlMs = 60_000
  /** Principals kept; beyond it the oldest goes (entries of deleted keys are never read again). */
  static readonly entryLimit = 10_000
  static readonly unknownLimit = 10_000

  static readonly layer = Layer.sync(PrincipalCache, () => {
    const entries = new Map<string, { principal: Principal; validUntil: number; revision: number }>()
    const unknown = new Map<string, number>()
    return {
      get: (key) => {
        const entry = entries.get(key)
        if (entry === undefined) return undefined
        if (entry.validUntil > Date.now()) return entry
        entries.delete(key)
        return undefined
      },
      set: (key, principal, validUntil, revision) => {
        entries.delete(key)
        if (entries.size >= PrincipalCache.entryLimit) entries.delete(entries.keys().next().value!)
        entries.set(key, { principal, validUntil, revision })
      },
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
  })
}

const unauthorized = (error: string) => new Unauthorized({ error })

const companyNotFound = (companyId: string) => new NotFound({ error: `Company ${companyId} not found` })

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
  const named = new Set([...(fromHeader === undefined ? [] : [fromHeader]), ...companyIdsInQuery(request.url)])
  named.delete("")
  // The request acts in the first company it names; any other one it names is judged by `reachCompany`.
  const [companyId, ...alsoNamed] = named
  return Effect.succeed({ credential, companyId, alsoNamed })
}

/**
 * The one tenancy decision for a company id a request names (path, query,
 * body or header) besides the company it acts in: one the caller cannot
 * reach answers 404, so that its existence is not revealed — any other
 * company for a company key, a company the user does not belong to for a
 * personal key. Only a personal key's user who belongs to both companies is
 * told that the two ids conflict (400).
 */
const reachCompany = (
  lookup: PrincipalLookup["Service"],
  principal: Principal,
  companyId: string | undefined
): Effect.Effect<Principal, BadRequest | NotFound> => {
  if (companyId === undefined || companyId === principal.companyId) return Effect.succeed(principal)
  if (principal.keyKind === "company") return Effect.fail(companyNotFound(companyId))
  return Effect.flatMap(lookup.isCompanyUser(companyId, principal.userId), (belongs) =>
    Effect.fail(
      belongs
        ? new BadRequest({ error: `Conflicting company ids: the request acts in ${principal.companyId} and also names ${companyId}` })
        : companyNotFound(companyId)
    ))
}

/**
 * The rate-limit token the request being answered took, with its credential.
 * A call the service runs in process on that request's behalf, with the same
 * credential (MCP's `platform_execute_action`), is part of it and takes no
 * token of its own. Only the service provides it: no client can.
 */
const SpentToken = Context.Reference<{ readonly credentialHash: string; readonly taken: Taken } | undefined>(
  "auth/SpentToken",
  { defaultValue: () => undefined }
)

export const AuthenticationLive = Layer.effect(Authentication, Effect.gen(function*() {
  const cache = yield* PrincipalCache
  const limiter = yield* RateLimiter
  const revisions = yield* AccessRevision
  const lookup = yield* PrincipalLookup
  /**
   * Lookups under way, by cache key and access revision: a burst of requests
   * with a credential not cached yet waits for one lookup instead of each
   * making its own. A lookup runs on its own fiber, so a client that goes
   * away does not cancel it for the others.
   */
  const inFlight = new Map<string, Deferred.Deferred<Principal, Unauthorized | NotFound>>()
  const resolveAndCache = (cacheKey: string, credential: string, companyId: string | undefined, revision: number) =>
    lookup.resolve(credential, companyId).pipe(
      Effect.map((resolved) => {
        cache.set(cacheKey, resolved.principal, resolved.validUntil, revision)
        return resolved.principal
      }),
      Effect.catchTag("UnknownCredential", () => {
        cache.rememberUnknown(credential)
        return Effect.fail(unauthorized("Invalid API key"))
      })
    )
  const resolveOnce = (cacheKey: string, credential: string, companyId: string | undefined, revision: number) =>
    Effect.suspend(() => {
      const flight = `${cacheKey}\u0000${revision}`
      const running = inFlight.get(flight)
      if (running !== undefined) return Deferred.await(running)
      const done = Deferred.makeUnsafe<Principal, Unauthorized | NotFound>()
      inFlight.set(flight, done)
      const settle = (exit: Exit.Exit<Principal, Unauthorized | NotFound>) =>
        Effect.andThen(Effect.sync(() => inFlight.delete(flight)), Deferred.done(done, exit))
      return resolveAndCache(cacheKey, credential, companyId, revision).pipe(
        Effect.onExit(settle),
        Effect.forkDetach,
        Effect.andThen(Deferred.await(done))
      )
    })
  const authenticate = Effect.fnUntraced(function*<E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) {
    const request = yield* HttpServerRequest.HttpServerRequest
    const spent = yield* SpentToken
    const take = (credentialHash: string) =>
      spent?.credentialHash === credentialHash ? Effect.succeed(spent.taken) : limiter.take(credentialHash)
    const { credential, companyId, alsoNamed } = yield* readCredentials(request)
    const cacheKey = `${credential}\u0000${companyId ?? ""}`
    const cached = cache.get(cacheKey)
    let principal: Principal
    let taken: Taken
    if (cached === undefined) {
      if (cache.isUnknown(credential)) return yield* unauthorized("Invalid API key")
      principal = yield* resolveOnce(cacheKey, credential, companyId, yield* revisions.current)
      taken = yield* take(principal.credentialHash)
    } else {
      taken = yield* take(cached.principal.credentialHash)
      principal = taken.revision === cached.revision
        ? cached.principal
        : yield* resolveOnce(cacheKey, credential, companyId, taken.revision)
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
    for (const named of alsoNamed) yield* reachCompany(lookup, principal, named)
    const response = yield* handler.pipe(
      Effect.provideService(CurrentPrincipal, principal),
      Effect.provideService(RequestRevision, { revision: taken.revision }),
      Effect.provideService(SpentToken, { credentialHash: principal.credentialHash, taken })
    )
    return HttpServerResponse.setHeaders(response, headers)
  })
  return { bearer: authenticate, apiKey: authenticate }
}))

/**
 * What the middleware and handlers share per process: the principal cache and
 * the rate limiter, over the storage's `AccessRevision`.
 */
export const AuthServices = Layer.mergeAll(PrincipalCache.layer, RateLimiter.layer)

/** A company id the client sent in a body, path or query: the principal when it is the request's company (`reachCompany`). */
export const requireCompany = (companyId: string | undefined) =>
  Effect.flatMap(Effect.all([PrincipalLookup, CurrentPrincipal]), ([lookup, principal]) => reachCompany(lookup, principal, companyId))
