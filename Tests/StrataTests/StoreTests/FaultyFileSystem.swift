import Foundation
import GRDBSQLite

/// An SQLite VFS that forwards everything to the default one and, while ``readOnly`` is
/// on, fails as a file system remounted read-only does: writes and truncations fail with
/// the error the Unix VFS gives for `EROFS` (`SQLITE_IOERR_WRITE`, `…_TRUNCATE`), and new
/// files open read-only. Linux refuses to remount a file system read-only while a file on it
/// is open for writing, so this is how an open store meets one.
///
/// ``install()`` registers it as the process's default VFS: call it only in a child process
/// of the tests (see `FaultInjectionTests`), never in the test runner itself.
enum FaultyFileSystem {
    nonisolated(unsafe) static var readOnly = false
    nonisolated(unsafe) static var base: UnsafeMutablePointer<sqlite3_vfs>?
    nonisolated(unsafe) static var methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)


    static func install() {
        guard base == nil, let found = sqlite3_vfs_find(nil) else { return }
        base = found
        let methods = FaultyFileSystem.methods
        methods.initialize(to: sqlite3_io_methods(
            iVersion: 2,
            xClose: { file in real(file).xClose!(inner(file)) },
            xRead: { file, buffer, amount, offset in real(file).xRead!(inner(file), buffer, amount, offset) },
            xWrite: { file, buffer, amount, offset in
                FaultyFileSystem.readOnly ? ioErrorWrite : real(file).xWrite!(inner(file), buffer, amount, offset)
            },
            xTruncate: { file, size in FaultyFileSystem.readOnly ? ioErrorTruncate : real(file).xTruncate!(inner(file), size) },
            xSync: { file, flags in real(file).xSync!(inner(file), flags) },
            xFileSize: { file, size in real(file).xFileSize!(inner(file), size) },
            xLock: { file, lock in real(file).xLock!(inner(file), lock) },
            xUnlock: { file, lock in real(file).xUnlock!(inner(file), lock) },
            xCheckReservedLock: { file, out in real(file).xCheckReservedLock!(inner(file), out) },
            xFileControl: { file, op, argument in real(file).xFileControl!(inner(file), op, argument) },
            xSectorSize: { file in real(file).xSectorSize!(inner(file)) },
            xDeviceCharacteristics: { file in real(file).xDeviceCharacteristics!(inner(file)) },
            xShmMap: { file, page, size, extend, out in real(file).xShmMap!(inner(file), page, size, extend, out) },
            xShmLock: { file, offset, n, flags in real(file).xShmLock!(inner(file), offset, n, flags) },
            xShmBarrier: { file in real(file).xShmBarrier!(inner(file)) },
            xShmUnmap: { file, delete in real(file).xShmUnmap!(inner(file), delete) },
            xFetch: nil, xUnfetch: nil))
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: found.pointee)
        vfs.pointee.zName = UnsafePointer(strdup("strata_faulty"))
        vfs.pointee.szOsFile = Int32(faultyHeader) + found.pointee.szOsFile
        vfs.pointee.xOpen = { _, name, file, flags, outFlags in
            var flags = flags
            if FaultyFileSystem.readOnly && flags & SQLITE_OPEN_READWRITE != 0 {
                // As the Unix VFS does on a read-only file system: open read-only.
                if flags & SQLITE_OPEN_CREATE != 0 && flags & SQLITE_OPEN_MAIN_DB == 0 { return SQLITE_CANTOPEN }
                flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY
            }
            let base = FaultyFileSystem.base
            let code = base!.pointee.xOpen!(base, name, inner(file), flags, outFlags)
            file!.pointee.pMethods = inner(file).pointee.pMethods == nil ? nil : UnsafePointer(FaultyFileSystem.methods)
            return code
        }
        sqlite3_vfs_register(vfs, 1)
    }
}

// File-scope helpers: the VFS callbacks are C function pointers, which capture nothing.

// Extended result codes are C macros Swift does not import.
private let ioErrorWrite = SQLITE_IOERR | (3 << 8)
private let ioErrorTruncate = SQLITE_IOERR | (6 << 8)

/// The size of our header before the base VFS's file object.
let faultyHeader = (MemoryLayout<sqlite3_file>.stride + 15) & ~15

private func inner(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<sqlite3_file> {
    UnsafeMutableRawPointer(file!).advanced(by: faultyHeader).assumingMemoryBound(to: sqlite3_file.self)
}

private func real(_ file: UnsafeMutablePointer<sqlite3_file>?) -> sqlite3_io_methods {
    inner(file).pointee.pMethods.pointee
}
