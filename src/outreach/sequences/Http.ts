import { HttpApiBuilder } from "effect/http-api"
import { SequencesApi } from "./Api.ts"
import { areaApi } from "../../http/Area.ts"
import { authorize } from "../../auth/Policy.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import * as Executions from "./Executions.ts"
import * as Sequences from "./Sequences.ts"
import { answer } from "../../http/Refusals.ts"

const api = areaApi(SequencesApi)

export const SequencesLive = HttpApiBuilder.group(api, "sequences", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("sequences:write")(Sequences.create(payload))))
    .handle("list", ({ query }) => answer(authorize("sequences:read")(Sequences.list(query, pageRequest(query)))))
    .handle("get", ({ params, query }) => answer(authorize("sequences:read")(Sequences.get(params.sequenceId, query))))
    .handle("update", ({ params, payload }) => answer(authorize("sequences:write")(Sequences.update(params.sequenceId, payload))))
    .handle("remove", ({ params, query }) => answer(authorize("sequences:write")(Sequences.remove(params.sequenceId, query))))
    .handle("unenroll", ({ params, payload }) => answer(authorize("sequences:write")(Sequences.unenroll(params.sequenceId, payload))))
    .handle("enroll", ({ params, payload }) => answer(authorize("sequences:write")(Sequences.enroll(params.sequenceId, payload))))
    .handle("executions", ({ params, query }) => answer(authorize("sequences:read")(Executions.list(params.sequenceId, query))))
    .handle("approve", ({ params, payload }) => answer(authorize("sequences:write")(Executions.approve(params.sequenceId, payload))))
    .handle("regenerate", ({ params, payload }) =>
      answer(authorize("sequences:write")(Executions.regenerate(params.sequenceId, payload)))))
