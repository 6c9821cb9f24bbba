import { area } from "../../http/Area.ts"
import { McpApi } from "./Api.ts"
import { McpLive } from "./Http.ts"

export const McpArea = area({
  name: "mcp",
  groups: [McpApi],
  handlers: [McpLive]
})
