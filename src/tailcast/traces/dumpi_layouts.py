"""SST DUMPI function ids and per-function argument layouts (facts of the binary format).

Function ids are positions in DUMPI's `dumpi_function` enumeration (sst-dumpi
dumpi/common/funclabels.h); `IO_*` are its DUMPIO_* request functions. After the last MPI
function come three labels: all-functions (footer array length), enter/exit of profiled user
functions, and end-of-stream.

A layout lists a record's arguments in file order as `name:kind` (sst-dumpi
dumpi/common/dumpiio.c, iodefs.h). Kinds:
  i int32 · h 16-bit handle (datatype, comm, group, info, win, file, keyval, errhandler)
  b 8-bit enum (op, thread level, …) · q int64 · I int32 array (u32 count + items)
  H 16-bit array · S statuses (present when the record's mask enables them)
  c char array (u32 length + bytes) · C array of char arrays · D array of C
  A array of int32 arrays · V argv of MPI_Init (argc + strings; argc written twice before
  DUMPI 0.6.2) · W argv of MPI_Init_thread · X int32 array from DUMPI 0.6.9 on, else one
  int32 · Y the same from 0.6.8 on.
A `?` suffix: the field is present only on the root (when `commrank` equals `root`).
"""

from __future__ import annotations

FUNCTION_NAMES: tuple[str, ...] = tuple(
    """
    Send Recv Get_count Bsend Ssend Rsend Buffer_attach Buffer_detach Isend Ibsend Issend
    Irsend Irecv Wait Test Request_free Waitany Testany Waitall Testall Waitsome Testsome
    Iprobe Probe Cancel Test_cancelled Send_init Bsend_init Ssend_init Rsend_init Recv_init
    Start Startall Sendrecv Sendrecv_replace Type_contiguous Type_vector Type_hvector
    Type_indexed Type_hindexed Type_struct Address Type_extent Type_size Type_lb Type_ub
    Type_commit Type_free Get_elements Pack Unpack Pack_size Barrier Bcast Gather Gatherv
    Scatter Scatterv Allgather Allgatherv Alltoall Alltoallv Reduce Op_create Op_free
    Allreduce Reduce_scatter Scan Group_size Group_rank Group_translate_ranks Group_compare
    Comm_group Group_union Group_intersection Group_difference Group_incl Group_excl
    Group_range_incl Group_range_excl Group_free Comm_size Comm_rank Comm_compare Comm_dup
    Comm_create Comm_split Comm_free Comm_test_inter Comm_remote_size Comm_remote_group
    Intercomm_create Intercomm_merge Keyval_create Keyval_free Attr_put Attr_get Attr_delete
    Topo_test Cart_create Dims_create Graph_create Graphdims_get Graph_get Cartdim_get
    Cart_get Cart_rank Cart_coords Graph_neighbors_count Graph_neighbors Cart_shift Cart_sub
    Cart_map Graph_map Get_processor_name Get_version Errhandler_create Errhandler_set
    Errhandler_get Errhandler_free Error_string Error_class Wtime Wtick Init Finalize
    Initialized Abort Pcontrol Close_port Comm_accept Comm_connect Comm_disconnect
    Comm_get_parent Comm_join Comm_spawn Comm_spawn_multiple Lookup_name Open_port
    Publish_name Unpublish_name Accumulate Get Put Win_complete Win_create Win_fence
    Win_free Win_get_group Win_lock Win_post Win_start Win_test Win_unlock Win_wait
    Alltoallw Exscan Add_error_class Add_error_code Add_error_string Comm_call_errhandler
    Comm_create_keyval Comm_delete_attr Comm_free_keyval Comm_get_attr Comm_get_name
    Comm_set_attr Comm_set_name File_call_errhandler Grequest_complete Grequest_start
    Init_thread Is_thread_main Query_thread Status_set_cancelled Status_set_elements
    Type_create_keyval Type_delete_attr Type_dup Type_free_keyval Type_get_attr
    Type_get_contents Type_get_envelope Type_get_name Type_set_attr Type_set_name
    Type_match_size Win_call_errhandler Win_create_keyval Win_delete_attr Win_free_keyval
    Win_get_attr Win_get_name Win_set_attr Win_set_name Alloc_mem Comm_create_errhandler
    Comm_get_errhandler Comm_set_errhandler File_create_errhandler File_get_errhandler
    File_set_errhandler Finalized Free_mem Get_address Info_create Info_delete Info_dup
    Info_free Info_get Info_get_nkeys Info_get_nthkey Info_get_valuelen Info_set
    Pack_external Pack_external_size Request_get_status Type_create_darray
    Type_create_hindexed Type_create_hvector Type_create_indexed_block Type_create_resized
    Type_create_struct Type_create_subarray Type_get_extent Type_get_true_extent
    Unpack_external Win_create_errhandler Win_get_errhandler Win_set_errhandler File_open
    File_close File_delete File_set_size File_preallocate File_get_size File_get_group
    File_get_amode File_set_info File_get_info File_set_view File_get_view File_read_at
    File_read_at_all File_write_at File_write_at_all File_iread_at File_iwrite_at File_read
    File_read_all File_write File_write_all File_iread File_iwrite File_seek
    File_get_position File_get_byte_offset File_read_shared File_write_shared
    File_iread_shared File_iwrite_shared File_read_ordered File_write_ordered
    File_seek_shared File_get_position_shared File_read_at_all_begin File_read_at_all_end
    File_write_at_all_begin File_write_at_all_end File_read_all_begin File_read_all_end
    File_write_all_begin File_write_all_end File_read_ordered_begin File_read_ordered_end
    File_write_ordered_begin File_write_ordered_end File_get_type_extent Register_datarep
    File_set_atomicity File_get_atomicity File_sync IO_Test IO_Wait IO_Testall IO_Waitall
    IO_Testany IO_Waitany IO_Waitsome IO_Testsome
    """.split()  # noqa: SIM905 - 290 names read better as words than as quoted strings
)
ALL_FUNCTIONS = len(FUNCTION_NAMES)  # 290: length-1 of the footer's count arrays
FUNCTION_ENTER = ALL_FUNCTIONS + 1
FUNCTION_EXIT = ALL_FUNCTIONS + 2
END_OF_STREAM = ALL_FUNCTIONS + 3

_SEND = "count:i datatype:h dest:i tag:i comm:h"
_ISEND = _SEND + " request:i"
_IRECV = "count:i datatype:h source:i tag:i comm:h request:i"
_SOME = "count:i requests:I outcount:i indices:I statuses:S"
_TVEC = "count:i blocklength:i stride:i oldtype:h newtype:h"
_TIDX = "count:i lengths:I indices:I oldtype:h newtype:h"
_RMA = "origincount:i origintype:h targetrank:i targetdisp:i targetcount:i targettype:h"
_GROUP2 = "group1:h group2:h newgroup:h"
_NAMES = "servicename:c info:h portname:c"
_CONNECT = "portname:c info:h root:i oldcomm:h newcomm:h"

LAYOUTS: dict[str, str] = {
    "Send": _SEND, "Bsend": _SEND, "Ssend": _SEND, "Rsend": _SEND,
    "Recv": "count:i datatype:h source:i tag:i comm:h status:S",
    "Get_count": "status:S datatype:h count:i",
    "Buffer_attach": "size:i", "Buffer_detach": "size:i",
    "Isend": _ISEND, "Ibsend": _ISEND, "Issend": _ISEND, "Irsend": _ISEND, "Irecv": _IRECV,
    "Wait": "request:i status:S", "Test": "request:i flag:i status:S",
    "Request_free": "request:i",
    "Waitany": "count:i requests:I index:i status:S",
    "Testany": "count:i requests:I index:i flag:i status:S",
    "Waitall": "count:i requests:I statuses:S",
    "Testall": "count:i requests:I flag:i statuses:S",
    "Waitsome": _SOME, "Testsome": _SOME,
    "Iprobe": "source:i tag:i comm:h flag:i status:S",
    "Probe": "source:i tag:i comm:h status:S",
    "Cancel": "request:i", "Test_cancelled": "status:S cancelled:i",
    "Send_init": _ISEND, "Bsend_init": _ISEND, "Ssend_init": _ISEND, "Rsend_init": _ISEND,
    "Recv_init": _IRECV, "Start": "request:i", "Startall": "count:i requests:I",
    "Sendrecv": "sendcount:i sendtype:h dest:i sendtag:i recvcount:i recvtype:h source:i "
    "recvtag:i comm:h status:S",
    "Sendrecv_replace": "count:i datatype:h dest:i sendtag:i source:i recvtag:i comm:h "
    "status:S",
    "Type_contiguous": "count:i oldtype:h newtype:h",
    "Type_vector": _TVEC, "Type_hvector": _TVEC,
    "Type_indexed": _TIDX, "Type_hindexed": _TIDX,
    "Type_struct": "count:i lengths:I indices:X oldtypes:H newtype:h",
    "Address": "address:i", "Type_extent": "datatype:h extent:i",
    "Type_size": "datatype:h size:i", "Type_lb": "datatype:h lb:i", "Type_ub": "datatype:h ub:i",
    "Type_commit": "datatype:h", "Type_free": "datatype:h",
    "Get_elements": "status:S datatype:h elements:i",
    "Pack": "incount:i datatype:h outcount:i position_in:i position_out:i comm:h",
    "Unpack": "incount:i position_in:i position_out:i outcount:i datatype:h comm:h",
    "Pack_size": "incount:i datatype:h comm:h size:i",
    "Barrier": "comm:h",
    "Bcast": "count:i datatype:h root:i comm:h",
    "Gather": "commrank:i sendcount:i sendtype:h root:i comm:h recvcount:i? recvtype:h?",
    "Gatherv": "commrank:i commsize:i sendcount:i sendtype:h root:i comm:h recvcounts:I? "
    "displs:I? recvtype:h",
    "Scatter": "commrank:i recvcount:i recvtype:h root:i comm:h sendcount:i? sendtype:h?",
    "Scatterv": "commrank:i commsize:i sendtype:h recvcount:i recvtype:h root:i comm:h "
    "sendcounts:I? displs:I?",
    "Allgather": "sendcount:i sendtype:h recvcount:i recvtype:h comm:h",
    "Allgatherv": "commsize:i sendcount:i sendtype:h recvcounts:I displs:I recvtype:h comm:h",
    "Alltoall": "sendcount:i sendtype:h recvcount:i recvtype:h comm:h",
    "Alltoallv": "commsize:i sendcounts:I senddispls:I sendtype:h recvcounts:I recvdispls:I "
    "recvtype:h comm:h",
    "Reduce": "count:i datatype:h op:b root:i comm:h",
    "Op_create": "commute:i op:b", "Op_free": "op:b",
    "Allreduce": "count:i datatype:h op:b comm:h",
    "Reduce_scatter": "commsize:i recvcounts:I datatype:h op:b comm:h",
    "Scan": "count:i datatype:h op:b comm:h",
    "Group_size": "group:h size:i", "Group_rank": "group:h rank:i",
    "Group_translate_ranks": "group1:h count:i ranks1:I group2:h ranks2:I",
    "Group_compare": "group1:h group2:h result:b",
    "Comm_group": "comm:h group:h",
    "Group_union": _GROUP2, "Group_intersection": _GROUP2, "Group_difference": _GROUP2,
    "Group_incl": "group:h count:i ranks:I newgroup:h",
    "Group_excl": "group:h count:i ranks:I newgroup:h",
    "Group_range_incl": "group:h count:i ranges:A newgroup:h",
    "Group_range_excl": "group:h count:i ranges:A newgroup:h",
    "Group_free": "group:h",
    "Comm_size": "comm:h size:i", "Comm_rank": "comm:h rank:i",
    "Comm_compare": "comm1:h comm2:h result:b",
    "Comm_dup": "oldcomm:h newcomm:h",
    "Comm_create": "oldcomm:h group:h newcomm:h",
    "Comm_split": "oldcomm:h color:i key:i newcomm:h",
    "Comm_free": "comm:h",
    "Comm_test_inter": "comm:h inter:i", "Comm_remote_size": "comm:h size:i",
    "Comm_remote_group": "comm:h group:h",
    "Intercomm_create": "localcomm:h localleader:i remotecomm:h remoteleader:i tag:i "
    "newcomm:h",
    "Intercomm_merge": "comm:h high:i newcomm:h",
    "Keyval_create": "key:h", "Keyval_free": "key:h",
    "Attr_put": "comm:h key:i", "Attr_get": "comm:h key:i flag:i",
    "Attr_delete": "comm:h key:i", "Topo_test": "comm:h topo:b",
    "Cart_create": "oldcomm:h ndim:i dims:I periods:I reorder:i newcomm:h",
    "Dims_create": "nodes:i ndim:i dims_in:I dims_out:I",
    "Graph_create": "numedges:i oldcomm:h nodes:i index:I edges:I reorder:i newcomm:h",
    "Graphdims_get": "comm:h nodes:i edges:i",
    "Graph_get": "totedges:i totnodes:i comm:h maxindex:i maxedges:i index:I edges:I",
    "Cartdim_get": "comm:h ndim:i",
    "Cart_get": "ndim:i comm:h maxdims:i dims:I periods:I coords:Y",
    "Cart_rank": "ndim:i comm:h coords:I rank:i",
    "Cart_coords": "ndim:i comm:h rank:i maxdims:i coords:I",
    "Graph_neighbors_count": "comm:h rank:i nneigh:i",
    "Graph_neighbors": "nneigh:i comm:h rank:i maxneighbors:i neighbors:I",
    "Cart_shift": "comm:h direction:i displ:i source:i dest:i",
    "Cart_sub": "ndim:i oldcomm:h remain_dims:I newcomm:h",
    "Cart_map": "comm:h ndim:i dims:I period:I newrank:i",
    "Graph_map": "numedges:i comm:h nodes:i index:I edges:I newrank:i",
    "Get_processor_name": "name:c resultlen:i",
    "Get_version": "version:i subversion:i",
    "Errhandler_create": "errhandler:h", "Errhandler_set": "comm:h errhandler:h",
    "Errhandler_get": "comm:h errhandler:h", "Errhandler_free": "errhandler:h",
    "Error_string": "errorcode:i errorstring:c resultlen:i",
    "Error_class": "errorcode:i errorclass:i",
    "Wtime": "", "Wtick": "", "Init": "argv:V", "Finalize": "",
    "Initialized": "result:i", "Abort": "comm:h errorcode:i",
    "Close_port": "portname:c", "Comm_accept": _CONNECT, "Comm_connect": _CONNECT,
    "Comm_disconnect": "comm:h", "Comm_get_parent": "parent:h", "Comm_join": "fd:i comm:h",
    "Comm_spawn": "commrank:i root:i oldcomm:h newcomm:h command:c? argv:C? maxprocs:i? "
    "info:h? errcodes:I?",
    "Comm_spawn_multiple": "totprocs:i commrank:i root:i oldcomm:h newcomm:h count:i? "
    "commands:C? argvs:D? maxprocs:I? info:H? errcodes:I?",
    "Lookup_name": _NAMES, "Open_port": "info:h portname:c",
    "Publish_name": _NAMES, "Unpublish_name": _NAMES,
    "Accumulate": _RMA + " op:b win:h", "Get": _RMA + " win:h", "Put": _RMA + " win:h",
    "Win_complete": "win:h",
    "Win_create": "size:i dispunit:i info:h comm:h win:h",
    "Win_fence": "assertion:b win:h", "Win_free": "win:h",
    "Win_get_group": "win:h group:h",
    "Win_lock": "locktype:b winrank:i assertion:b win:h",
    "Win_post": "group:h assertion:b win:h", "Win_start": "group:h assertion:b win:h",
    "Win_test": "win:h flag:i", "Win_unlock": "winrank:i win:h", "Win_wait": "win:h",
    "Alltoallw": "commsize:i sendcounts:I senddispls:I sendtypes:H recvcounts:I "
    "recvdispls:I recvtypes:H comm:h",
    "Exscan": "count:i datatype:h op:b comm:h",
    "Add_error_class": "errorclass:i", "Add_error_code": "errorclass:i errorcode:i",
    "Add_error_string": "errorcode:i errorstring:c",
    "Comm_call_errhandler": "comm:h errorcode:i",
    "Comm_create_keyval": "keyval:h", "Comm_delete_attr": "comm:h keyval:h",
    "Comm_free_keyval": "keyval:h", "Comm_get_attr": "comm:h keyval:h flag:i",
    "Comm_get_name": "comm:h name:c resultlen:i", "Comm_set_attr": "comm:h keyval:h",
    "Comm_set_name": "comm:h name:c",
    "File_call_errhandler": "file:h errorcode:i",
    "Grequest_complete": "request:i", "Grequest_start": "request:i",
    "Init_thread": "argv:W required:b provided:b",
    "Is_thread_main": "flag:i", "Query_thread": "supported:b",
    "Status_set_cancelled": "status:S flag:i",
    "Status_set_elements": "status:S datatype:h count:i",
    "Type_create_keyval": "keyval:h", "Type_delete_attr": "datatype:h keyval:h",
    "Type_dup": "oldtype:h newtype:h", "Type_free_keyval": "keyval:h",
    "Type_get_attr": "datatype:h keyval:h flag:i",
    "Type_get_contents": "numdatatypes:i numaddresses:i numintegers:i datatype:h "
    "maxintegers:i maxaddresses:i maxdatatypes:i arrintegers:I arraddresses:I "
    "arrdatatypes:H",
}  # fmt: skip
ENTER_EXIT_LAYOUT = "fn:q"

# Predefined datatype ids (dumpi/common/constants.h) → MPI_Type_size on LP64 Linux (pair
# types packed, as the LP64 sample's own size record says). Used only
# when a trace lacks its own datatype-size record (written since DUMPI 0.6.6), which is
# authoritative: e.g. MPI_LONG is 4 bytes in the Blue Gene/P sample.
PREDEFINED_TYPE_SIZES: dict[int, int] = {
    1: 0, 2: 1, 3: 1, 4: 1, 5: 1, 6: 4, 7: 2, 8: 2, 9: 4, 10: 4, 11: 8, 12: 8, 13: 4, 14: 8,
    15: 16, 16: 8, 17: 8, 18: 8, 19: 1, 20: 0, 21: 0, 22: 8, 23: 12, 24: 12, 25: 6, 26: 8,
    27: 20,
}  # fmt: skip

# Communicator handles (constants.h).
COMM_NULL_HANDLE, COMM_WORLD_HANDLE, COMM_SELF_HANDLE = 1, 2, 3
REQUEST_NULL_HANDLE = 1
ANY_SOURCE = -1
ANY_TAG = -1
