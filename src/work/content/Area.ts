import { area } from "../../http/Area.ts"
import { ContentApi } from "./Api.ts"
import { ContentLive } from "./Http.ts"

export const ContentArea = area({
  name: "content",
  groups: [ContentApi],
  handlers: [ContentLive]
})
