import { area } from "../../http/Area.ts"
import { DesignChatApi } from "./Api.ts"
import { DesignChatLive } from "./Http.ts"

export const DesignArea = area({
  name: "design",
  groups: [DesignChatApi],
  handlers: [DesignChatLive]
})
