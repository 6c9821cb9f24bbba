import { connect, createServer } from "node:net"

/** Loopback ports for the helper servers the tests start (spamd, Dovecot). */

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })

/** Whether something accepts connections on 127.0.0.1 at `port`. */
export const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.destroy()
      resolve(true)
    })
    socket.on("error", () => resolve(false))
  })
