import { Layer } from "effect"
import { area } from "../../http/Area.ts"
import { AdminApi } from "./Api.ts"
import { AdminAuthLive, AdminLive } from "./Http.ts"

export const AdminArea = area({
  name: "admin",
  groups: [AdminApi],
  handlers: [AdminLive.pipe(Layer.provide(AdminAuthLive))]
})
