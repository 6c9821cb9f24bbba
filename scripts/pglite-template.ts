// `node scripts/pglite-template.ts`: makes the pre-initialised embedded
// database (src/storage/PgliteTemplate.ts) in dist/pglite-template/, which a
// first start copies instead of running initdb. Part of `npm run build`; run
// by `npm start` and the benchmarks (scripts/build.ts) when it is missing or stale.
import { Effect } from "effect"
import { makeTemplate, templateDirectory } from "../src/storage/PgliteTemplate.ts"

const manifest = await Effect.runPromise(makeTemplate(templateDirectory))
process.stderr.write(`made ${templateDirectory} (PGlite ${manifest.pglite}, migration ${manifest.migration})\n`)
