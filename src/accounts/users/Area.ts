import { area } from "../../http/Area.ts"
import { UsersRepo } from "./UsersRepo.ts"

export const UsersArea = area({
  name: "users",
  repositories: [UsersRepo.layer]
})
