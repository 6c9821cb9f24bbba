import { Config, Context, Effect, Layer, Schema, SchemaIssue } from "effect"
import { lookup as systemLookup, Resolver } from "node:dns/promises"
import { isIP, type LookupFunction } from "node:net"
import ipaddr from "ipaddr.js"
import { commaList, positiveInt } from "./AppConfig.ts"

/**
 * Which addresses an outbound fetch of a URL a user gave may reach
 * (DESIGN §7.2): public unicast addresses only, unless the operator's
 * `OUTBOUND_ALLOWED_HOSTS` names the host or a CIDR holding the address.
 * A name is resolved once (through `DNS_SERVERS` when set), refused if any
 * of its addresses is internal, and the connection is made to the checked
 * addresses: `checkedLookup` is the socket's own lookup, so there is no
 * second resolution an attacker's DNS could answer differently.
 */

export interface OutboundSettings {
  /** `OUTBOUND_ALLOWED_HOSTS`: host names (exact, case-insensitive) and CIDRs reachable although internal. */
  readonly allowedHosts: ReadonlyArray<string>
  /** `DNS_SERVERS`: `host[:port]` resolvers for the guard's lookups; empty: the system's resolver. */
  readonly dnsServers: ReadonlyArray<string>
  /** `OUTBOUND_MAX_BYTES`: the most bytes of one response body. */
  readonly maxBytes: number
  /** `OUTBOUND_TIMEOUT_MS`: one fetch, redirects and body included. */
  readonly timeoutMs: number
}

export const outboundDefaults: OutboundSettings = {
  allowedHosts: [],
  dnsServers: [],
  maxBytes: 10 * 1024 * 1024,
  timeoutMs: 15_000
}

/** Host names and CIDRs; a malformed CIDR stops the start-up. */
const allowedHosts = commaList("OUTBOUND_ALLOWED_HOSTS").pipe(Config.flatMap((entries) => {
  const invalid = entries.find((entry) => entry.includes("/") && !ipaddr.isValidCIDR(entry))
  return invalid === undefined
    ? Config.succeed(entries)
    : Config.fail(new Schema.SchemaError(new SchemaIssue.InvalidValue({
      message: `OUTBOUND_ALLOWED_HOSTS: "${invalid}" is not a valid CIDR`
    })))
}))

export class OutboundConfig extends Context.Service<OutboundConfig, OutboundSettings>()("platform/OutboundConfig") {
  static readonly fromEnv = Config.all({
    allowedHosts,
    dnsServers: commaList("DNS_SERVERS"),
    maxBytes: positiveInt("OUTBOUND_MAX_BYTES", outboundDefaults.maxBytes),
    timeoutMs: positiveInt("OUTBOUND_TIMEOUT_MS", outboundDefaults.timeoutMs)
  })

  static readonly layer = Layer.effect(OutboundConfig, Effect.orDie(OutboundConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<OutboundSettings>) =>
    Layer.succeed(OutboundConfig, { ...outboundDefaults, ...overrides })
}

/** Why a URL or address may not be fetched. */
export class AddressRefused extends Error {
  readonly code = "OUTBOUND_REFUSED"
}

/** Only IPv6's global unicast block is public; ipaddr.js names the special ranges inside it. */
const globalUnicast6 = ipaddr.parseCIDR("2000::/3")

/** The special range an address falls in (`loopback`, `private`, `linkLocal`, …), or undefined when public. */
export const internalRange = (address: string): string | undefined => {
  const parsed = ipaddr.process(address) // IPv4-mapped IPv6 (::ffff:a.b.c.d) becomes the IPv4 address
  const range = parsed.range()
  if (range !== "unicast") return range
  if (parsed.kind() === "ipv6" && !parsed.match(globalUnicast6)) return "reserved"
  return undefined
}

export interface AddressPolicy {
  /** Undefined when `address` (of `host`) may be reached, else why not. */
  readonly refusal: (host: string, address: string) => string | undefined
  /** The checked addresses of `host` (an IP literal or a name); fails with `AddressRefused`. */
  readonly resolve: (host: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: 4 | 6 }>>
}

const splitServer = (server: string) => {
  // "[::1]:53", "127.0.0.1:5353", "::1" (a bare IPv6 address), "10.0.0.1"
  const bracketed = /^\[(.+)\](?::(\d+))?$/.exec(server)
  if (bracketed) return bracketed[2] === undefined ? bracketed[1]! : `[${bracketed[1]}]:${bracketed[2]}`
  return server
}

/** A resolver asking `DNS_SERVERS` (`host[:port]` list), or the system's resolvers when the list is empty. */
export const dnsResolver = (dnsServers: ReadonlyArray<string>): Resolver => {
  const resolver = new Resolver({ timeout: 5_000, tries: 2 })
  if (dnsServers.length > 0) resolver.setServers(dnsServers.map(splitServer))
  return resolver
}

export const makeAddressPolicy = (settings: OutboundSettings): AddressPolicy => {
  const allowedNames = new Set(settings.allowedHosts.filter((entry) => !entry.includes("/")).map((entry) => entry.toLowerCase()))
  const allowedRanges = settings.allowedHosts.filter((entry) => entry.includes("/")).map((entry) => ipaddr.parseCIDR(entry))
  const resolver = settings.dnsServers.length === 0 ? undefined : dnsResolver(settings.dnsServers)

  const inAllowedRange = (address: string) => {
    const parsed = ipaddr.process(address)
    return allowedRanges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits))
  }

  const refusal = (host: string, address: string) => {
    const range = internalRange(address)
    if (range === undefined || allowedNames.has(host.toLowerCase()) || inAllowedRange(address)) return undefined
    return host === address
      ? `${address} is an internal address (${range})`
      : `${host} resolves to an internal address (${address}, ${range})`
  }

  const lookupAll = async (host: string) => {
    if (resolver === undefined) {
      return (await systemLookup(host, { all: true, verbatim: true })).map((entry) => ({
        address: entry.address,
        family: entry.family === 6 ? 6 as const : 4 as const
      }))
    }
    const settled = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)])
    const found = settled.flatMap((result, index) =>
      result.status === "fulfilled" ? result.value.map((address) => ({ address, family: index === 0 ? 4 as const : 6 as const })) : []
    )
    if (found.length === 0) {
      const failure = settled.find((result) => result.status === "rejected")
      throw failure?.status === "rejected" ? failure.reason : new Error(`${host} has no address`)
    }
    return found
  }

  return {
    refusal,
    resolve: async (host) => {
      const literal = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
      const family = isIP(literal)
      const addresses = family === 0 ? await lookupAll(host) : [{ address: literal, family: family as 4 | 6 }]
      for (const { address } of addresses) {
        const reason = refusal(family === 0 ? host : literal, address)
        if (reason !== undefined) throw new AddressRefused(reason)
      }
      return addresses
    }
  }
}

/**
 * The lookup a socket uses (`net.connect`'s `lookup`): the policy's checked
 * addresses, so the connection goes where the check looked.
 */
export const checkedLookup = (policy: AddressPolicy): LookupFunction => (hostname, options, callback) => {
  policy.resolve(hostname).then(
    (resolved) => {
      const wanted = options.family === 4 || options.family === 6
        ? resolved.filter((entry) => entry.family === options.family)
        : resolved
      if (wanted.length === 0) {
        return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: "ENOTFOUND" }), "", 4)
      }
      if (options.all === true) return (callback as unknown as (error: null, all: typeof wanted) => void)(null, wanted)
      callback(null, wanted[0]!.address, wanted[0]!.family)
    },
    (error: NodeJS.ErrnoException) => callback(error, "", 4)
  )
}
