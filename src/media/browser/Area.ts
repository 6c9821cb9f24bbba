import { area } from "../../http/Area.ts"
import { BrowserApi } from "./Api.ts"
import { BrowserLive } from "./Http.ts"

export const BrowserArea = area({
  name: "browser",
  groups: [BrowserApi],
  handlers: [BrowserLive]
})
