import { pathToFileURL } from "node:url"
import { builtMain, ensureBuilt } from "./build.ts"

/** `npm start`: runs the built server (`dist/main.js`), building it first only when sources changed. */
ensureBuilt()
await import(pathToFileURL(builtMain).href)
