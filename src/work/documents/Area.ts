import { Layer } from "effect"
import { area } from "../../http/Area.ts"
import { DocumentsApi, KnowledgeApi } from "./Api.ts"
import { DocumentsRepo } from "./DocumentsRepo.ts"
import { DocumentsLive, KnowledgeLive, KnowledgeSettingsLive } from "./Http.ts"
import { IndexerLive } from "./Indexer.ts"

export const DocumentsArea = area({
  name: "documents",
  groups: [DocumentsApi, KnowledgeApi],
  handlers: [DocumentsLive, KnowledgeLive],
  repositories: [DocumentsRepo.layer],
  workers: [IndexerLive.pipe(Layer.provide(KnowledgeSettingsLive))]
})
