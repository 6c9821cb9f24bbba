import { area } from "../../http/Area.ts"
import { AudioApi } from "./Api.ts"
import { AudioLive } from "./Http.ts"

export const AudioArea = area({
  name: "audio",
  groups: [AudioApi],
  handlers: [AudioLive]
})
