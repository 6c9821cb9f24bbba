import { area } from "../http/Area.ts"
import { DocumentsApi } from "./Api.ts"
import { DocumentsLive } from "./Http.ts"

export const DocumentsArea = area({
  name: "documents",
  groups: [DocumentsApi],
  handlers: [DocumentsLive]
})
