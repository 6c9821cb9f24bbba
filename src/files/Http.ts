import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../app/Api.ts"
import * as Files from "./Files.ts"

export const FilesLive = HttpApiBuilder.group(Api, "files", (handlers) =>
  handlers.handle("publicFile", ({ params }) => Files.serve(params.fileId, params.name)))
