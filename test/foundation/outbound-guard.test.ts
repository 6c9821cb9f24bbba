import { describe, expect, it } from "@effect/vitest"
import dns2 from "dns2"
import { Effect, Layer } from "effect"
import { createServer, type RequestListener } from "node:http"
import type { AddressInfo } from "node:net"
import { GuardedFetch } from "../../src/platform/Outbound.ts"
import { internalRange, OutboundConfig, type OutboundSettings } from "../../src/platform/OutboundPolicy.ts"

/** An HTTP server on 127.0.0.1 for the scope; answers its port. */
const loopbackHttp = (handler: RequestListener) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly port: number; readonly close: () => void }>((resolve) => {
        const server = createServer(handler)
        server.listen(0, "127.0.0.1", () => resolve({
          port: (server.address() as AddressInfo).port,
          close: () => server.closeAllConnections() ?? server.close()
        }))
      })
    ),
    (server) => Effect.sync(server.close)
  ).pipe(Effect.map((server) => server.port))

/** A DNS server on 127.0.0.1 (UDP) answering from `records` (name → addresses); answers its port. */
const loopbackDns = (records: Record<string, ReadonlyArray<string>>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const server = dns2.createServer({
        udp: true,
        handle: (request, send) => {
          const response = dns2.Packet.createResponseFromRequest(request)
          for (const question of request.questions) {
            for (const address of records[question.name] ?? []) {
              const type = address.includes(":") ? dns2.Packet.TYPE.AAAA : dns2.Packet.TYPE.A
              if (type !== question.type) continue
              response.answers.push({ name: question.name, type, class: dns2.Packet.CLASS.IN, ttl: 60, address } as dns2.Packet.Resource)
            }
          }
          send(response)
        }
      })
      await server.listen({ udp: { port: 0, address: "127.0.0.1" } })
      return server
    }),
    (server) => Effect.promise(() => server.close())
  ).pipe(Effect.map((server) => server.addresses().udp!.port))

const guard = (settings: Partial<OutboundSettings> = {}) =>
  GuardedFetch.layer.pipe(Layer.provide(OutboundConfig.layerWith(settings)))

const fetchWith = (settings: Partial<OutboundSettings>, url: string) =>
  Effect.scoped(Effect.provide(GuardedFetch.use((outbound) => outbound.fetch(url)), guard(settings)))

const hello: RequestListener = (_, response) => response.end("hello")

describe("the outbound guard", () => {
  it("classifies addresses with ipaddr.js: only public unicast is external", () => {
    expect(internalRange("127.0.0.1")).toBe("loopback")
    expect(internalRange("10.1.2.3")).toBe("private")
    expect(internalRange("192.168.0.1")).toBe("private")
    expect(internalRange("169.254.169.254")).toBe("linkLocal")
    expect(internalRange("100.64.0.1")).toBe("carrierGradeNat")
    expect(internalRange("224.0.0.1")).toBe("multicast")
    expect(internalRange("0.0.0.0")).toBe("unspecified")
    expect(internalRange("::1")).toBe("loopback")
    expect(internalRange("::")).toBe("unspecified")
    expect(internalRange("fe80::1")).toBe("linkLocal")
    expect(internalRange("fd00:ec2::254")).toBe("uniqueLocal")
    expect(internalRange("ff02::1")).toBe("multicast")
    expect(internalRange("::ffff:127.0.0.1")).toBe("loopback")
    expect(internalRange("::ffff:a9fe:a9fe")).toBe("linkLocal")
    expect(internalRange("64:ff9b::7f00:1")).toBe("rfc6052")
    expect(internalRange("::7f00:1")).toBe("reserved")
    expect(internalRange("93.184.216.34")).toBeUndefined()
    expect(internalRange("2606:4700:4700::1111")).toBeUndefined()
  })

  it.effect("refuses a loopback server by default and reaches it when OUTBOUND_ALLOWED_HOSTS names it", () =>
    Effect.gen(function*() {
      const port = yield* loopbackHttp(hello)
      const refused = yield* Effect.flip(fetchWith({}, `http://127.0.0.1:${port}/`))
      expect(refused._tag).toBe("OutboundRefused")
      expect(refused.message).toContain("127.0.0.1 is an internal address (loopback)")
      const mapped = yield* Effect.flip(fetchWith({}, `http://[::ffff:127.0.0.1]:${port}/`))
      expect(mapped.message).toContain("loopback")
      const byCidr = yield* fetchWith({ allowedHosts: ["127.0.0.0/8"] }, `http://127.0.0.1:${port}/page`)
      expect(byCidr.status).toBe(200)
      expect(new TextDecoder().decode(byCidr.body)).toBe("hello")
      const byName = yield* fetchWith({ allowedHosts: ["127.0.0.1"] }, `http://127.0.0.1:${port}/`)
      expect(byName.status).toBe(200)
    }))

  it.effect("refuses other schemes and malformed URLs without connecting", () =>
    Effect.gen(function*() {
      expect((yield* Effect.flip(fetchWith({}, "file:///etc/passwd"))).message).toContain("not file")
      expect((yield* Effect.flip(fetchWith({}, "gopher://example.com/"))).message).toContain("not gopher")
      expect((yield* Effect.flip(fetchWith({}, "not a url"))).message).toContain("is not a valid URL")
      expect((yield* Effect.flip(fetchWith({}, "http://169.254.169.254/latest/meta-data/"))).message).toContain("linkLocal")
    }))

  it.effect("re-checks every redirect: one to an internal address is refused", () =>
    Effect.gen(function*() {
      const port = yield* loopbackHttp((request, response) => {
        if (request.url === "/to-metadata") response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end()
        else if (request.url === "/to-private") response.writeHead(301, { location: "http://10.0.0.1/admin" }).end()
        else if (request.url === "/to-ipv6-loopback") response.writeHead(307, { location: `http://[::1]:${port}/` }).end()
        else if (request.url === "/loop") response.writeHead(302, { location: "/loop" }).end()
        else if (request.url === "/to-self") response.writeHead(302, { location: "/landing" }).end()
        else response.end(`landed on ${request.url}`)
      })
      const allowed = { allowedHosts: ["127.0.0.1/32"] }
      const base = `http://127.0.0.1:${port}`
      expect((yield* Effect.flip(fetchWith(allowed, `${base}/to-metadata`))).message).toContain("169.254.169.254 is an internal address (linkLocal)")
      expect((yield* Effect.flip(fetchWith(allowed, `${base}/to-private`))).message).toContain("10.0.0.1 is an internal address (private)")
      expect((yield* Effect.flip(fetchWith(allowed, `${base}/to-ipv6-loopback`))).message).toContain("::1 is an internal address (loopback)")
      expect((yield* Effect.flip(fetchWith(allowed, `${base}/loop`))).message).toContain("redirects more than 5 times")
      const followed = yield* fetchWith(allowed, `${base}/to-self`)
      expect(followed.url).toBe(`${base}/landing`)
      expect(new TextDecoder().decode(followed.body)).toBe("landed on /landing")
    }))

  it.effect("resolves names through DNS_SERVERS and refuses a name with any internal address", () =>
    Effect.gen(function*() {
      const port = yield* loopbackHttp(hello)
      const dnsPort = yield* loopbackDns({
        "internal.example": ["127.0.0.1"],
        "mixed.example": ["93.184.216.34", "::1"],
        "mapped.example": ["::ffff:a00:5"]
      })
      const dns = { dnsServers: [`127.0.0.1:${dnsPort}`] }
      const internal = yield* Effect.flip(fetchWith(dns, `http://internal.example:${port}/`))
      expect(internal._tag).toBe("OutboundRefused")
      expect(internal.message).toContain("internal.example resolves to an internal address (127.0.0.1, loopback)")
      const mixed = yield* Effect.flip(fetchWith(dns, `http://mixed.example:${port}/`))
      expect(mixed.message).toContain("mixed.example resolves to an internal address (::1, loopback)")
      const mapped = yield* Effect.flip(fetchWith(dns, `http://mapped.example:${port}/`))
      expect(mapped.message).toContain("private")
      // Allowed by name, the connection goes to the address the guard resolved: the loopback server.
      const reached = yield* fetchWith({ ...dns, allowedHosts: ["internal.example"] }, `http://internal.example:${port}/`)
      expect(new TextDecoder().decode(reached.body)).toBe("hello")
    }))

  it.effect("caps the body and the time", () =>
    Effect.gen(function*() {
      const port = yield* loopbackHttp((request, response) => {
        if (request.url === "/big") response.end("x".repeat(5_000))
        else if (request.url === "/chunked") {
          response.write("x".repeat(3_000))
          response.end("x".repeat(3_000))
        } else if (request.url === "/slow") setTimeout(() => response.end("late"), 5_000).unref()
        else response.end("small")
      })
      const settings = { allowedHosts: ["127.0.0.1"], maxBytes: 4_000, timeoutMs: 300 }
      const base = `http://127.0.0.1:${port}`
      expect((yield* Effect.flip(fetchWith(settings, `${base}/big`))).message).toContain("at most 4000")
      expect((yield* Effect.flip(fetchWith(settings, `${base}/chunked`))).message).toContain("more than 4000 bytes")
      const slow = yield* Effect.flip(fetchWith(settings, `${base}/slow`))
      expect(slow._tag).toBe("OutboundError")
      expect(slow.message).toContain("did not answer within 300 ms")
      expect((yield* fetchWith(settings, `${base}/small`)).status).toBe(200)
    }))
})
