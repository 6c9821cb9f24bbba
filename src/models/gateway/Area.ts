import { area } from "../../http/Area.ts"
import { AnthropicApi, ChatApi, ModelsApi } from "./Api.ts"
import { GatewayLive } from "./Http.ts"

export const GatewayArea = area({
  name: "gateway",
  groups: [ModelsApi, ChatApi, AnthropicApi],
  handlers: [GatewayLive]
})
