import { area } from "../../http/Area.ts"
import { MeApi } from "./Api.ts"
import { MeLive } from "./Http.ts"

export const MeArea = area({
  name: "me",
  groups: [MeApi],
  handlers: [MeLive]
})
