// Command wineprng writes bcryptprimitives.dll for wine versions that lack
// it (Debian 12's wine 8.0): Go's Windows runtime, since Go 1.22, will not
// start without ProcessPrng from that DLL ("fatal error:
// bcryptprimitives.dll not found"). The DLL it writes holds no code: a
// PE32+ image whose one export, ProcessPrng, is forwarded to
// advapi32.SystemFunction036 (RtlGenRandom), which wine has and which
// takes the same arguments (buffer, length) and returns TRUE in the same
// register. scripts/test-windows.sh puts it in the wine prefix's
// system32 when the prefix has none.
//
//	go run ./scripts/wineprng OUTPUT
package main

import (
	"encoding/binary"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: wineprng OUTPUT.dll")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], dll("bcryptprimitives.dll", "ProcessPrng", "advapi32.SystemFunction036"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "wineprng:", err)
		os.Exit(1)
	}
}

const (
	sectionRVA  = 0x1000
	fileAlign   = 0x200
	headersSize = 0x200
)

// dll returns a PE32+ (x86-64) DLL named name that exports export as a
// forwarder to target ("module.function").
func dll(name, export, target string) []byte {
	// The export section: directory, address table, name table, ordinal
	// table, then the strings.
	var ed []byte
	le := binary.LittleEndian
	const dirSize = 40
	eat := dirSize
	enpt := eat + 4
	ords := enpt + 4
	strs := ords + 2
	nameRVA := sectionRVA + strs
	exportRVA := nameRVA + len(name) + 1
	targetRVA := exportRVA + len(export) + 1
	ed = le.AppendUint32(ed, 0)                      // Characteristics
	ed = le.AppendUint32(ed, 0)                      // TimeDateStamp
	ed = le.AppendUint32(ed, 0)                      // Major, MinorVersion
	ed = le.AppendUint32(ed, uint32(nameRVA))        // Name
	ed = le.AppendUint32(ed, 1)                      // Base
	ed = le.AppendUint32(ed, 1)                      // NumberOfFunctions
	ed = le.AppendUint32(ed, 1)                      // NumberOfNames
	ed = le.AppendUint32(ed, uint32(sectionRVA+eat)) // AddressOfFunctions
	ed = le.AppendUint32(ed, uint32(sectionRVA+enpt))
	ed = le.AppendUint32(ed, uint32(sectionRVA+ords))
	ed = le.AppendUint32(ed, uint32(targetRVA)) // inside the export directory: a forwarder
	ed = le.AppendUint32(ed, uint32(exportRVA))
	ed = le.AppendUint16(ed, 0)
	for _, s := range []string{name, export, target} {
		ed = append(append(ed, s...), 0)
	}
	raw := (len(ed) + fileAlign - 1) &^ (fileAlign - 1)

	b := make([]byte, 0, headersSize+raw)
	// DOS header: "MZ" and, at 0x3c, where the PE header starts.
	dos := make([]byte, 0x40)
	copy(dos, "MZ")
	le.PutUint32(dos[0x3c:], 0x40)
	b = append(b, dos...)
	b = append(b, "PE\x00\x00"...)
	// COFF header.
	b = le.AppendUint16(b, 0x8664) // AMD64
	b = le.AppendUint16(b, 1)      // sections
	b = le.AppendUint32(b, 0)      // TimeDateStamp
	b = le.AppendUint32(b, 0)      // PointerToSymbolTable
	b = le.AppendUint32(b, 0)      // NumberOfSymbols
	b = le.AppendUint16(b, 240)    // SizeOfOptionalHeader
	b = le.AppendUint16(b, 0x2022) // EXECUTABLE_IMAGE | LARGE_ADDRESS_AWARE | DLL
	// Optional header (PE32+).
	b = le.AppendUint16(b, 0x20b)
	b = append(b, 0, 0)                                // linker version
	b = le.AppendUint32(b, 0)                          // SizeOfCode
	b = le.AppendUint32(b, uint32(raw))                // SizeOfInitializedData
	b = le.AppendUint32(b, 0)                          // SizeOfUninitializedData
	b = le.AppendUint32(b, 0)                          // AddressOfEntryPoint: none
	b = le.AppendUint32(b, sectionRVA)                 // BaseOfCode
	b = le.AppendUint64(b, 0x180000000)                // ImageBase
	b = le.AppendUint32(b, 0x1000)                     // SectionAlignment
	b = le.AppendUint32(b, fileAlign)                  // FileAlignment
	b = le.AppendUint16(b, 6)                          // OS version
	b = le.AppendUint16(b, 0)                          //
	b = le.AppendUint32(b, 0)                          // image version
	b = le.AppendUint16(b, 6)                          // subsystem version
	b = le.AppendUint16(b, 0)                          //
	b = le.AppendUint32(b, 0)                          // Win32VersionValue
	b = le.AppendUint32(b, uint32(sectionRVA+0x1000))  // SizeOfImage
	b = le.AppendUint32(b, headersSize)                // SizeOfHeaders
	b = le.AppendUint32(b, 0)                          // CheckSum
	b = le.AppendUint16(b, 3)                          // Subsystem: console
	b = le.AppendUint16(b, 0x0140)                     // DYNAMIC_BASE | NX_COMPAT
	b = le.AppendUint64(b, 0x100000)                   // stack reserve
	b = le.AppendUint64(b, 0x1000)                     // stack commit
	b = le.AppendUint64(b, 0x100000)                   // heap reserve
	b = le.AppendUint64(b, 0x1000)                     // heap commit
	b = le.AppendUint32(b, 0)                          // LoaderFlags
	b = le.AppendUint32(b, 16)                         // NumberOfRvaAndSizes
	b = le.AppendUint32(b, sectionRVA)                 // export directory
	b = le.AppendUint32(b, uint32(len(ed)))            //
	b = append(b, make([]byte, 15*8)...)               // the other directories
	b = append(b, ".edata\x00\x00"...)                 // section header
	b = le.AppendUint32(b, uint32(len(ed)))            // VirtualSize
	b = le.AppendUint32(b, sectionRVA)                 // VirtualAddress
	b = le.AppendUint32(b, uint32(raw))                // SizeOfRawData
	b = le.AppendUint32(b, headersSize)                // PointerToRawData
	b = append(b, make([]byte, 12)...)                 // relocations, line numbers
	b = le.AppendUint32(b, 0x40000040)                 // INITIALIZED_DATA | MEM_READ
	b = append(b, make([]byte, headersSize-len(b))...) // pad the headers
	b = append(b, ed...)
	return append(b, make([]byte, raw-len(ed))...)
}
