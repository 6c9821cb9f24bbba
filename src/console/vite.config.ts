import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

/** The console's build: `src/console/` → `dist/console/` (index.html and hashed `assets/`). */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../../dist/console", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    // Everything as files: the Content-Security-Policy allows no inline script or style.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false }
  }
})
