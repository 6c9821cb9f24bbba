import dns2 from "dns2"
import { Effect } from "effect"
import { Resolver } from "node:dns/promises"

/**
 * An authoritative DNS server on 127.0.0.1 (UDP, `dns2`) answering TXT
 * queries from a zone the test changes as it goes: `publish(name, ...records)`
 * sets the TXT records at a name (each record as one string, or as its
 * character-strings when longer than 255 octets), `unpublish(name)` drops them.
 */
export const loopbackDns = Effect.gen(function*() {
  const zone = new Map<string, ReadonlyArray<ReadonlyArray<string>>>()
  const server = yield* Effect.acquireRelease(
    Effect.promise(async () => {
      const created = dns2.createServer({
        udp: true,
        handle: (request, send) => {
          const response = dns2.Packet.createResponseFromRequest(request)
          for (const question of request.questions) {
            if (question.type !== dns2.Packet.TYPE.TXT) continue
            for (const data of zone.get(question.name.toLowerCase()) ?? []) {
              response.answers.push({
                name: question.name,
                type: dns2.Packet.TYPE.TXT,
                class: dns2.Packet.CLASS.IN,
                ttl: 60,
                data: [...data]
              } as unknown as dns2.Packet.Resource)
            }
          }
          send(response)
        }
      })
      await created.listen({ udp: { port: 0, address: "127.0.0.1" } })
      return created
    }),
    (created) => Effect.promise(() => created.close())
  )
  const address = `127.0.0.1:${server.addresses().udp!.port}`
  const resolver = new Resolver({ timeout: 2_000, tries: 1 })
  resolver.setServers([address])
  return {
    /** `host:port`, for `DNS_SERVERS`. */
    address,
    /** A resolver asking this server, in `dns.promises.resolve`'s shape (what `mailauth` takes). */
    resolve: (name: string, type: string) => resolver.resolve(name, type) as Promise<Array<Array<string>>>,
    publish: (name: string, ...records: ReadonlyArray<string | ReadonlyArray<string>>) =>
      void zone.set(name.toLowerCase(), records.map((record) => typeof record === "string" ? [record] : record)),
    unpublish: (name: string) => void zone.delete(name.toLowerCase())
  }
})
