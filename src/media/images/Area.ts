import { area } from "../../http/Area.ts"
import { ImagesApi } from "./Api.ts"
import { ImagesLive } from "./Http.ts"

export const ImagesArea = area({
  name: "images",
  groups: [ImagesApi],
  handlers: [ImagesLive]
})
