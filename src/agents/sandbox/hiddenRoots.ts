// The host folders an agent's sandbox replaces with an empty tmpfs (bwrap.ts): their
// sockets are other programs' doors (VS Code's IPC, ssh and gpg agents, docker.sock), and a
// read-only mount does not stop connect(). The warm `ralph` process keeps its socket under
// one of them for the same reason (src/cli/warmAddress.ts).
export const HIDDEN_ROOTS: readonly string[] = ['/tmp', '/run'];
