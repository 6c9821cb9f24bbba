import { area } from "../../http/Area.ts"
import { CanvasesApi } from "./Api.ts"
import { CanvasesRepo } from "./CanvasesRepo.ts"
import { CanvasesLive } from "./Http.ts"

export const CanvasesArea = area({
  name: "canvases",
  groups: [CanvasesApi],
  handlers: [CanvasesLive],
  repositories: [CanvasesRepo.layer]
})
