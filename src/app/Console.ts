import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { readdirSync, readFileSync } from "node:fs"
import { extname, join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The web console (docs/console.md): the single-page app `npm run build` puts
 * in `dist/console/`, served at `/` with its hashed assets under `/assets/`.
 * The files are read once at start (a few hundred KB); a checkout that was
 * not built answers 404 naming the command that builds it.
 */

/** `dist/console/`: the same folder from `src/app/` and from the compiled `dist/app/`. */
export const consoleDirectory = fileURLToPath(new URL("../../dist/console/", import.meta.url))

/**
 * Scripts and styles only from the service itself (no inline script), the API
 * on the same origin, user content only in `sandbox=""` frames made from `srcdoc`.
 */
export const consolePolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

const contentTypes: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png"
}

const securityHeaders = {
  "content-security-policy": consolePolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

const notFound = (error: string) => HttpServerResponse.jsonUnsafe({ error }, { status: 404 })

/** The built files; none while missing or being rebuilt (a build empties the folder first). */
const readConsole = () => {
  try {
    const assetsDirectory = join(consoleDirectory, "assets")
    const assets = new Map(readdirSync(assetsDirectory).map((name) => [name, readFileSync(join(assetsDirectory, name))]))
    return { index: readFileSync(join(consoleDirectory, "index.html"), "utf8"), assets }
  } catch {
    return undefined
  }
}

/** The console's routes: `/` (the app's page) and `/assets/<file>` (immutable, content-hashed names). */
export const ConsoleRoutes = Layer.unwrap(Effect.sync(() => {
  const built = readConsole()
  return Layer.mergeAll(
    HttpRouter.add("GET", "/", built === undefined
      ? notFound("The console is not built: run npm run build")
      : HttpServerResponse.html(built.index).pipe(HttpServerResponse.setHeaders({ ...securityHeaders, "cache-control": "no-cache" }))),
    HttpRouter.add("GET", "/assets/:file", (request) => {
      const name = new URL(request.url, "http://console").pathname.slice("/assets/".length)
      const body = built?.assets.get(name)
      return Effect.succeed(body === undefined
        ? notFound(`No console asset ${name}`)
        : HttpServerResponse.uint8Array(body, { contentType: contentTypes[extname(name)] ?? "application/octet-stream" }).pipe(
          HttpServerResponse.setHeaders({ ...securityHeaders, "cache-control": "public, max-age=31536000, immutable" })
        ))
    })
  )
}))
