import { area } from "../../http/Area.ts"
import { ApiKeysApi, KeysApi } from "./Api.ts"
import { ApiKeysLive, KeysLive } from "./Http.ts"
import { KeysRepo } from "./KeysRepo.ts"

export const KeysArea = area({
  name: "keys",
  groups: [ApiKeysApi, KeysApi],
  handlers: [ApiKeysLive, KeysLive],
  repositories: [KeysRepo.layer]
})
