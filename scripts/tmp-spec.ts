import { OpenApi } from "effect/http-api"
import { Api } from "../src/app/Api.ts"
const spec = OpenApi.fromApi(Api) as any
const s = spec.components.schemas
console.log(JSON.stringify(s.AdminOrganization, null, 0).slice(0, 1500))
console.log(JSON.stringify(s.Project, null, 0).slice(0, 1500))
console.log(Object.keys(s).length, Object.keys(s).slice(0, 200).join(" "))
console.log(JSON.stringify(spec.tags).slice(0, 3000))
