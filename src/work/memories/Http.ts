import { HttpApiBuilder } from "effect/http-api"
import { MemoriesApi } from "./Api.ts"
import { authorize } from "../../auth/Policy.ts"
import { areaApi } from "../../http/Area.ts"
import * as Memories from "./Memories.ts"
import { answer } from "../../http/Refusals.ts"

const api = areaApi(MemoriesApi)

export const MemoriesLive = HttpApiBuilder.group(api, "memories", (handlers) =>
  handlers
    .handle("create", ({ params, payload }) => answer(authorize("memories:use")(Memories.create(params.companyId, payload))))
    .handle("list", ({ params, query }) => answer(authorize("memories:use")(Memories.list(params.companyId, query))))
    .handle("update", ({ params, payload }) =>
      answer(authorize("memories:use")(Memories.update(params.companyId, params.memory_id, payload))))
    .handle("delete", ({ params }) => answer(authorize("memories:use")(Memories.remove(params.companyId, params.memory_id)))))
