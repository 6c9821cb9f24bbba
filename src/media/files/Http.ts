import { HttpApiBuilder } from "effect/http-api"
import { answer } from "../../http/Refusals.ts"
import { FilesApi } from "./Api.ts"
import { areaApi } from "../../http/Area.ts"
import * as Files from "./Files.ts"

const api = areaApi(FilesApi)

export const FilesLive = HttpApiBuilder.group(api, "files", (handlers) =>
  handlers.handle("publicFile", ({ params }) => answer(Files.serve(params.fileId, params.name))))
