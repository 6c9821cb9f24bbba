import { NodeHttpClient } from "@effect/platform-node"
import { Context, Data, Duration, Effect, Layer, Schedule } from "effect"
import { HttpClient, type HttpClientRequest, type HttpClientResponse } from "effect/http"
import { isIP } from "node:net"
import { Agent, request } from "undici"
import { AddressRefused, checkedLookup, makeAddressPolicy, OutboundConfig } from "./OutboundPolicy.ts"

/**
 * Calls to outside services. Those the operator configured (model providers,
 * the job-search provider) go through `outboundClient` and `exchange`:
 * retried on 429, 5xx, network failures and timeouts with exponential backoff
 * and jitter, a bounded number of times, never on another 4xx; each attempt
 * is bounded by a timeout (the retry rule of docs/gateway.md, `LLM_MAX_RETRIES`).
 */

export interface OutboundOptions {
  /** Bounds one attempt until its answer has been read by `read`. */
  readonly timeoutMs: number
  /** Retries after the first attempt. */
  readonly maxRetries: number
}

/**
 * Why a call failed after its retries: the service kept rate limiting,
 * was unavailable (5xx, unreachable, silent), refused the platform's own
 * credentials (401/403), or rejected the request (another 4xx).
 */
export class OutboundError extends Data.TaggedError("OutboundError")<{
  readonly kind: "rate_limited" | "unavailable" | "credentials" | "rejected"
  readonly message: string
}> {}

/**
 * The HTTP client for calls to outside services, over an undici dispatcher.
 * Unlike `NodeHttpClient.layerUndici` it does not merge the context it was
 * built in into every request's: two copies of a map of the application's
 * services per call, 15 % of a gateway call's allocations (169 → 144 KB,
 * sampled on the built server); the client reads nothing from that context.
 */
export const outboundClient = <E, R>(dispatcher: Layer.Layer<NodeHttpClient.Dispatcher, E, R>) =>
  Layer.effect(HttpClient.HttpClient, NodeHttpClient.makeUndici).pipe(Layer.provide(dispatcher))

/** The refusal classes an area answers an outside service's failures with, each worded by its message. */
export interface OutboundRefusals<Limited, Rejected, Failed> {
  /** It kept rate limiting. */
  readonly limited: new(fields: { readonly message: string }) => Limited
  /** It rejected the request (another 4xx). */
  readonly rejected: new(fields: { readonly message: string }) => Rejected
  /** It failed, was unreachable, or refused the platform's credentials. */
  readonly failed: new(fields: { readonly message: string }) => Failed
}

/** An outside service's failure as the area's refusal of its kind. */
export const outboundRefusal = <Limited, Rejected, Failed>(refusals: OutboundRefusals<Limited, Rejected, Failed>) =>
(error: OutboundError): Limited | Rejected | Failed => {
  const fields = { message: error.message }
  switch (error.kind) {
    case "rate_limited":
      return new refusals.limited(fields)
    case "rejected":
      return new refusals.rejected(fields)
    default:
      return new refusals.failed(fields)
  }
}

class AttemptFailed<E> {
  readonly retryable: boolean
  readonly error: E
  constructor(retryable: boolean, error: E) {
    this.retryable = retryable
    this.error = error
  }
}

const retrySchedule = Schedule.exponential("250 millis", 2).pipe(Schedule.jittered)

/** The message a service put in its error body, whichever common shape it used. */
const errorMessage = (body: string): string => {
  try {
    const parsed = JSON.parse(body)
    const error = parsed?.error
    if (typeof error === "string") return error
    if (typeof error?.message === "string") return error.message
    if (typeof parsed?.message === "string") return parsed.message
  } catch {
    // not JSON: the raw text, shortened, is the best description
  }
  return body.slice(0, 500)
}

const refusal = (service: string, response: HttpClientResponse.HttpClientResponse) =>
  Effect.flatMap(Effect.orElseSucceed(response.text, () => ""), (body) => {
    const message = errorMessage(body)
    const status = response.status
    const failed = (retryable: boolean, kind: OutboundError["kind"], text: string) =>
      Effect.fail(new AttemptFailed(retryable, new OutboundError({ kind, message: text })))
    if (status === 429) return failed(true, "rate_limited", `${service} is rate limiting: ${message}`)
    if (status >= 500) return failed(true, "unavailable", `${service} failed (${status}): ${message}`)
    // The platform's own credentials for the service are wrong: not the client's fault.
    if (status === 401 || status === 403) {
      return failed(false, "credentials", `${service} refused the platform's credentials (${status})`)
    }
    return failed(false, "rejected", `${service}: ${message}`)
  })

/**
 * Sends `request` and hands a successful (2xx) response to `read`, which runs
 * inside the attempt, so reading the body is bounded by the timeout too.
 * A failure of `read` ends the call at once: it is not retried.
 */
export const exchange = <A, E>(
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  options: OutboundOptions & {
    readonly service: string
    readonly read: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E>
  }
): Effect.Effect<A, OutboundError | E> => {
  const unavailable = (message: string) =>
    new AttemptFailed<OutboundError | E>(true, new OutboundError({ kind: "unavailable", message }))
  const attempt = client.execute(request).pipe(
    Effect.mapError((error) => unavailable(`${options.service} unreachable: ${error.message}`)),
    Effect.flatMap((response): Effect.Effect<A, AttemptFailed<OutboundError | E>> =>
      response.status >= 200 && response.status < 300
        ? Effect.mapError(options.read(response), (error) => new AttemptFailed<OutboundError | E>(false, error))
        : refusal(options.service, response)
    ),
    Effect.timeoutOrElse({
      duration: Duration.millis(options.timeoutMs),
      orElse: () => Effect.fail(unavailable(`${options.service} did not answer within ${options.timeoutMs} ms`))
    })
  )
  return attempt.pipe(
    Effect.retry({ schedule: retrySchedule, times: options.maxRetries, while: (failure) => failure.retryable }),
    Effect.mapError((failure) => failure.error)
  )
}

/**
 * A URL a user gave (or content brought: a research result, a webhook, a
 * page to browse) that the guard refuses: not http(s), an internal address
 * that `OUTBOUND_ALLOWED_HOSTS` does not name, a body past
 * `OUTBOUND_MAX_BYTES`, too many redirects. The message says which.
 */
export class OutboundRefused extends Data.TaggedError("OutboundRefused")<{ readonly message: string }> {}

/** A fetched page: where it ended up after redirects, its status, type and body. */
export interface FetchedPage {
  readonly url: string
  readonly status: number
  readonly contentType: string | undefined
  readonly body: Uint8Array
}

export interface FetchOptions {
  readonly method?: "GET" | "POST" | "HEAD" | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly body?: string | undefined
}

const maxRedirects = 5

const redirectStatuses = new Set([301, 302, 303, 307, 308])

/** The guard's refusal somewhere in an error's cause chain (undici wraps the socket's lookup failure). */
const refusalIn = (error: unknown): AddressRefused | undefined => {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof AddressRefused) return cause
  }
  return undefined
}

/**
 * Outbound fetches of URLs that do not come from the operator's settings
 * (DESIGN §7.2). Every request goes through an undici agent whose sockets
 * resolve names with the guard's checked lookup (`OutboundPolicy.ts`); IP
 * literals are checked before connecting; each redirect is a new request
 * through the same checks; the body is cut off past `OUTBOUND_MAX_BYTES`
 * and the whole fetch, redirects included, past `OUTBOUND_TIMEOUT_MS`.
 * Calls to model providers and the job-search provider go to addresses
 * the operator configured and use `outboundClient` instead.
 */
export class GuardedFetch extends Context.Service<GuardedFetch, {
  /** Refuses a URL that can never be fetched (scheme, malformed, an internal literal address) without connecting. */
  readonly check: (url: string) => Effect.Effect<URL, OutboundRefused>
  readonly fetch: (url: string, options?: FetchOptions) => Effect.Effect<FetchedPage, OutboundRefused | OutboundError>
}>()("platform/GuardedFetch") {
  static readonly layer = Layer.effect(GuardedFetch, Effect.gen(function*() {
    const settings = yield* OutboundConfig
    const policy = makeAddressPolicy(settings)
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() => new Agent({ connect: { lookup: checkedLookup(policy) }, maxResponseSize: settings.maxBytes })),
      (agent) => Effect.promise(() => agent.close())
    )

    const check = (raw: string) =>
      Effect.gen(function*() {
        const url = URL.canParse(raw) ? new URL(raw) : undefined
        if (url === undefined) return yield* new OutboundRefused({ message: `"${raw.slice(0, 200)}" is not a valid URL` })
        if (url.protocol !== "http:" && url.protocol !== "https:") {
          return yield* new OutboundRefused({ message: `Only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, "")}` })
        }
        const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
        const reason = isIP(host) === 0 ? undefined : policy.refusal(host, host)
        if (reason !== undefined) return yield* new OutboundRefused({ message: `Refused to fetch ${url.origin}: ${reason}` })
        return url
      })

    const timedOut = (url: string) =>
      new OutboundError({ kind: "unavailable", message: `${url.slice(0, 200)} did not answer within ${settings.timeoutMs} ms` })

    const hop = (url: URL, options: FetchOptions, deadline: AbortSignal) =>
      Effect.tryPromise({
        // Interrupting the fetch (a client that left, the timeout) aborts the request.
        try: async (interrupted) => {
          const signal = AbortSignal.any([interrupted, deadline])
          const response = await request(url, {
            dispatcher: agent,
            method: options.method ?? "GET",
            headers: { "user-agent": "platform-api", ...options.headers },
            body: options.body,
            signal
          })
          // The agent's maxResponseSize cuts off a body past the cap, declared or streamed.
          const body = new Uint8Array(await response.body.arrayBuffer())
          const location = response.headers.location
          return {
            status: response.statusCode,
            contentType: typeof response.headers["content-type"] === "string" ? response.headers["content-type"] : undefined,
            location: typeof location === "string" ? location : undefined,
            body
          }
        },
        catch: (error): OutboundRefused | OutboundError => {
          const refused = refusalIn(error)
          if (refused !== undefined) return new OutboundRefused({ message: `Refused to fetch ${url.origin}: ${refused.message}` })
          if ((error as { code?: unknown }).code === "UND_ERR_RES_EXCEEDED_MAX_SIZE") {
            return new OutboundRefused({ message: `${url.origin} answered more than ${settings.maxBytes} bytes; at most ${settings.maxBytes} are read` })
          }
          if (deadline.aborted) return timedOut(url.toString())
          const message = error instanceof Error ? error.message : String(error)
          return new OutboundError({ kind: "unavailable", message: `${url.origin} unreachable: ${message}` })
        }
      })

    const fetch = (raw: string, options: FetchOptions = {}) =>
      Effect.gen(function*() {
        let url = yield* check(raw)
        let current = options
        const deadline = AbortSignal.timeout(settings.timeoutMs)
        for (let redirects = 0; ; redirects++) {
          const answer = yield* hop(url, current, deadline)
          if (!redirectStatuses.has(answer.status) || answer.location === undefined) {
            return { url: url.toString(), status: answer.status, contentType: answer.contentType, body: answer.body }
          }
          if (redirects === maxRedirects) {
            return yield* new OutboundRefused({ message: `${raw.slice(0, 200)} redirects more than ${maxRedirects} times` })
          }
          url = yield* check(new URL(answer.location, url).toString())
          // 303, and 301/302 after a POST, continue as a GET without a body (as browsers do).
          if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && current.method === "POST")) {
            current = { ...current, method: "GET", body: undefined }
          }
        }
      }).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(settings.timeoutMs),
          orElse: () => Effect.fail(timedOut(raw))
        })
      )

    return { check, fetch }
  }))
}
