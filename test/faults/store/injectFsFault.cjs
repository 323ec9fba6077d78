// Loaded with `node --require` into a `ralph` process: makes one file operation fail with an
// errno, for machines where a full disk or a read-only mount cannot be made for real.
// RALPH_TEST_FS_FAULT=<op>:<basename prefix>:<CODE>, op one of write | fsync | create.
//   write   FileHandle.write / fs.writeSync on a file whose name starts with the prefix
//   fsync   FileHandle.datasync / FileHandle.sync / fs.fsyncSync on such a file
//   create  fs.openSync / fsp.open with a creating flag ('w', 'wx', 'a') of such a file
'use strict';
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const path = require('node:path');

const spec = process.env.RALPH_TEST_FS_FAULT;
if (spec) {
  const [op, prefix, code] = spec.split(':');
  const matches = (file) => typeof file === 'string' && path.basename(file).startsWith(prefix);
  const fail = (syscall) => {
    const e = new Error(`${code}: injected fault, ${syscall}`);
    e.code = code;
    e.syscall = syscall;
    return e;
  };
  const fdFiles = new Map();
  const creating = (flags) => typeof flags === 'string' && /[wa]/.test(flags);

  const openSync = fs.openSync;
  fs.openSync = function (file, flags, ...rest) {
    if (op === 'create' && matches(String(file)) && creating(flags)) throw fail('open');
    const fd = openSync.call(fs, file, flags, ...rest);
    fdFiles.set(fd, String(file));
    return fd;
  };
  const writeSync = fs.writeSync;
  fs.writeSync = function (fd, ...rest) {
    if (op === 'write' && matches(fdFiles.get(fd))) throw fail('write');
    return writeSync.call(fs, fd, ...rest);
  };
  const fsyncSync = fs.fsyncSync;
  fs.fsyncSync = function (fd) {
    if (op === 'fsync' && matches(fdFiles.get(fd))) throw fail('fsync');
    return fsyncSync.call(fs, fd);
  };
  const open = fsp.open;
  fsp.open = async function (file, flags, ...rest) {
    if (op === 'create' && matches(String(file)) && creating(flags)) throw fail('open');
    const h = await open.call(fsp, file, flags, ...rest);
    if (matches(String(file))) {
      if (op === 'write') h.write = async () => Promise.reject(fail('write'));
      if (op === 'fsync') {
        h.datasync = async () => Promise.reject(fail('fdatasync'));
        h.sync = async () => Promise.reject(fail('fsync'));
      }
    }
    return h;
  };
}
