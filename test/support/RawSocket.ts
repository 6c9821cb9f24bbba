import { Effect } from "effect"
import { HttpServer } from "effect/http"
import { connect, type Socket } from "node:net"

/**
 * HTTP over a bare TCP socket, for what no HTTP client will send: malformed
 * framing, oversized headers, clients that dribble bytes or never finish.
 */

/** The loopback port of the test server. */
export const serverPort = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "UnixPathAddress" ? 0 : server.address.port)

export interface RawExchange {
  /** Everything the server sent before it closed the connection. */
  readonly received: string
  /** How many of the `dribble` pieces were written before the close. */
  readonly piecesSent: number
}

const opened = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket))
    socket.once("error", reject)
  })

/**
 * Writes `head`, then one of `pieces` every `everyMs` while the connection
 * stays open, and answers what the server sent once it closed it. A server
 * that never closes fails the test by running past the last piece.
 */
export const exchange = (port: number, head: string, dribble?: {
  readonly pieces: ReadonlyArray<string>
  readonly everyMs: number
}) =>
  Effect.promise(() =>
    opened(port).then((socket) =>
      new Promise<RawExchange>((resolve) => {
        let received = ""
        let piecesSent = 0
        let timer: NodeJS.Timeout | undefined
        socket.setEncoding("utf8")
        socket.on("data", (data: string) => void (received += data))
        socket.on("error", () => undefined)
        socket.on("close", () => {
          clearInterval(timer)
          resolve({ received, piecesSent })
        })
        socket.write(head)
        if (dribble === undefined) return
        timer = setInterval(() => {
          if (piecesSent === dribble.pieces.length) {
            clearInterval(timer)
            socket.destroy()
            return
          }
          socket.write(dribble.pieces[piecesSent++])
        }, dribble.everyMs)
      })
    )
  )

/** Opens a connection and keeps it until the returned effect's scope closes. */
export const openConnection = (port: number) =>
  Effect.acquireRelease(Effect.promise(() => opened(port)), (socket) => Effect.sync(() => socket.destroy()))

export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** The first HTTP/1.1 response in `text`. */
export const parseResponse = (text: string): RawResponse => {
  const end = text.indexOf("\r\n\r\n")
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n")
  const headers = Object.fromEntries(lines.map((line) => {
    const colon = line.indexOf(":")
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]
  }))
  const length = Number(headers["content-length"] ?? text.length)
  return { status: Number(statusLine.split(" ")[1]), headers, body: text.slice(end + 4, end + 4 + length) }
}

/** Writes a request on an open connection and answers the server's first bytes back. */
export const firstReply = (socket: Socket, request: string) =>
  Effect.promise(() =>
    new Promise<string>((resolve) => {
      socket.once("data", (data) => resolve(data.toString("utf8")))
      socket.write(request)
    })
  )

/** Waits on the wall clock (the `it.layer` tests run on `TestClock`): for what the server does on its own time. */
export const wallClockPause = (millis: number) =>
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, millis)))
