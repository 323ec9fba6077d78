// Errors the control plane's deciders raise: each has a stable `name` and the data a
// caller (the CLI, the loop, the extension) needs to report or react.

export class ControlError extends Error {
  override readonly name: string = 'ControlError';
}

export class TaskNotFoundError extends ControlError {
  override readonly name = 'TaskNotFoundError';
  constructor(readonly taskId: string) {
    super(`task ${taskId} not found`);
  }
}

export class PatchNotFoundError extends ControlError {
  override readonly name = 'PatchNotFoundError';
  constructor(readonly patchId: string) {
    super(`patch ${patchId} not found`);
  }
}

export class InvalidArgumentError extends ControlError {
  override readonly name = 'InvalidArgumentError';
}

/** The invariant: no task is done without a promoted patch. */
export class DoneWithoutPromotedPatchError extends ControlError {
  override readonly name = 'DoneWithoutPromotedPatchError';
  constructor(
    readonly taskId: string,
    via: string,
  ) {
    super(`task ${taskId} cannot become done via ${via}: it has no promoted patch (promote one with promote-patch)`);
  }
}

export class TaskAlreadyClaimedError extends ControlError {
  override readonly name = 'TaskAlreadyClaimedError';
  constructor(
    readonly taskId: string,
    readonly owner: string,
  ) {
    super(`task ${taskId} is already claimed by ${owner}`);
  }
}

export class InvalidStateError extends ControlError {
  override readonly name = 'InvalidStateError';
  constructor(
    readonly entityId: string,
    readonly state: string,
    message: string,
  ) {
    super(message);
  }
}

export class CommitNotFoundError extends ControlError {
  override readonly name = 'CommitNotFoundError';
  constructor(readonly commitHash: string) {
    super(`commit ${commitHash} does not exist in the repository`);
  }
}

export class CommitNotOnBranchError extends ControlError {
  override readonly name = 'CommitNotOnBranchError';
  constructor(
    readonly commitHash: string,
    readonly branch: string,
  ) {
    super(`commit ${commitHash} is not on the target branch ${branch}: a patch is promoted only by a commit the branch contains`);
  }
}

export class ReservedEventTypeError extends ControlError {
  override readonly name = 'ReservedEventTypeError';
  constructor(readonly eventType: string) {
    super(
      `event type ${eventType} belongs to the control plane; use its command (e.g. transition-task, promote-patch) instead of emit-event`,
    );
  }
}
