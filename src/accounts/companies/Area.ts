import { area } from "../../http/Area.ts"
import { CompaniesApi, CompanyUsersApi } from "./Api.ts"
import { CompaniesLive, CompanyUsersLive } from "./Http.ts"
import { CompaniesRepo } from "./CompaniesRepo.ts"

export const CompaniesArea = area({
  name: "companies",
  groups: [CompanyUsersApi, CompaniesApi],
  handlers: [CompanyUsersLive, CompaniesLive],
  repositories: [CompaniesRepo.layer]
})
