import { area } from "../../http/Area.ts"
import { SequencesApi } from "./Api.ts"
import { SequencesLive } from "./Http.ts"
import { SequencesRepo } from "./SequencesRepo.ts"
import { SequenceWorkerLive } from "./SequenceWorker.ts"

export const SequencesArea = area({
  name: "sequences",
  groups: [SequencesApi],
  handlers: [SequencesLive],
  repositories: [SequencesRepo.layer],
  workers: [SequenceWorkerLive]
})
