import { area } from "../../http/Area.ts"
import { FilesApi } from "./Api.ts"
import { BlobsRepo } from "./Blob.ts"
import { FilesRepo } from "./FilesRepo.ts"
import { FilesLive } from "./Http.ts"

export const FilesArea = area({
  name: "files",
  groups: [FilesApi],
  handlers: [FilesLive],
  repositories: [BlobsRepo.layer, FilesRepo.layer]
})
